import { awsProfile } from './aws-files.js';
import type { BackupStorage, StoredBytes, StoredObject } from './storage.js';
import type { S3Settings, S3Storage } from './s3.js';

export interface S3Place {
  /** "<bucket>/<key>" (CoreOS). */
  path: string;
  endpoint?: string;
  forcePathStyle?: boolean;
}

/** The bucket's storage and the object name a CoreOS S3 path stands for, with the awsSecret's two files. */
export function s3Storage(place: S3Place, credentials: string, config: string): { storage: BackupStorage & { destroy(): void }; name: string } {
  const slash = place.path.indexOf('/');
  const storage = new LazyS3Storage({
    bucket: place.path.slice(0, slash), ...(place.endpoint ? { endpoint: place.endpoint } : {}), forcePathStyle: place.forcePathStyle ?? false,
    ...awsProfile(credentials, config),
  });
  return { storage, name: place.path.slice(slash + 1) };
}

/** The CoreOS S3 path of `object` in the same bucket as `path` ("<bucket>/<key>"): another snapshot of one backup. */
export const siblingPath = (path: string, object: string): string => `${path.split('/')[0] ?? ''}/${object}`;

/**
 * An S3Storage whose AWS SDK is loaded at its first request: some 25 MiB and a quarter second of CPU that an
 * operator whose clusters back up nowhere, or not yet, never pays.
 */
class LazyS3Storage implements BackupStorage {
  private loaded: Promise<S3Storage> | undefined;

  constructor(private readonly settings: S3Settings) {}

  private storage(): Promise<S3Storage> {
    // A load that failed is tried again at the next request, not remembered for ever.
    this.loaded ??= import('./s3.js').then((m) => new m.S3Storage(this.settings)).catch((err: unknown) => {
      this.loaded = undefined;
      throw err;
    });
    return this.loaded;
  }

  async put(name: string, data: AsyncIterable<Uint8Array>): Promise<StoredObject> {
    return (await this.storage()).put(name, data);
  }

  async *get(name: string): AsyncIterable<Buffer> {
    yield* (await this.storage()).get(name);
  }

  async openUnchecked(name: string): Promise<StoredBytes> {
    return (await this.storage()).openUnchecked(name);
  }

  async list(prefix: string): Promise<string[]> {
    return (await this.storage()).list(prefix);
  }

  async remove(name: string): Promise<void> {
    await (await this.storage()).remove(name);
  }

  /** Closes the client's connections, if it was ever made. */
  destroy(): void {
    this.loaded?.then((s) => { s.destroy(); }, () => undefined);
  }
}
