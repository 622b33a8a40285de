import { createHash } from 'node:crypto';
import { DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { MultipartUpload } from './multipart.js';
import { BufferPool, filledParts } from './parts.js';
import { CHECKSUM_SUFFIX, checksumText, checksumsOf, committed, verified } from './storage.js';
import type { BackupStorage, StoredBytes, StoredObject } from './storage.js';

export interface S3Settings {
  bucket: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * A request to the store with no byte moving either way for this long is given up (and sent again by the
 * SDK's retries). The SDK waits for ever by default: one connection gone silent (a dropped NAT entry, a
 * stuck proxy) held a change log on one chunk, its RPO growing without end, or a backup on its upload.
 * Data flowing keeps a long upload or download alive; an S3 server that works on a request keeps the
 * connection busy well within this.
 */
const STORE_IDLE_TIMEOUT_MS = 30_000;
const STORE_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Parts of 5 MiB, S3's smallest, in three buffers used again and again (two sent while the next fills): memory
 * stays bounded whatever the snapshot's size. 15 MiB in all, where 8 MiB parts held 24 (issue 36: under 100 MiB
 * at the peak of a 1 GiB backup). S3's 10,000 parts make 50 GiB the largest object, six times etcd's largest
 * recommended database (8 GiB).
 */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/**
 * Whether the store answered a request with a client error: it did nothing. Anything else (no answer, a
 * server error the SDK retried, "no such upload" after a retry whose first try may have completed it) leaves
 * open whether the request took effect.
 */
export function refusedByStore(err: unknown): boolean {
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
  return status >= 400 && status < 500 && status !== 404;
}

/** Snapshots as objects in one bucket of an S3-compatible store; uploads are multipart and streamed. */
export class S3Storage implements BackupStorage {
  private readonly client: S3Client;

  constructor(private readonly s: S3Settings) {
    this.client = new S3Client({
      region: s.region, forcePathStyle: s.forcePathStyle ?? false, ...(s.endpoint ? { endpoint: s.endpoint } : {}),
      credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
      // The sha256 of the whole object is computed once and stored beside it; a per-part CRC on top costs
      // CPU the snapshot stream needs.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: STORE_CONNECT_TIMEOUT_MS, socketTimeout: STORE_IDLE_TIMEOUT_MS },
    });
    // Parts are sent without a signed payload hash: over plain HTTP the SDK would hash every part and the
    // server hash it again, two passes over the snapshot that the 2 cores it shares cannot spare. Integrity
    // does not rest on them: the sha256 of the whole object is stored beside it in a signed request, and
    // every read checks the data against it, so a part changed on the way fails the restore, never passes.
    this.client.middlewareStack.add((next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (context.commandName === 'UploadPartCommand' && request.headers) request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    }, { step: 'build', name: 'unsignedSnapshotParts' });
  }

  async put(name: string, data: AsyncIterable<Uint8Array>): Promise<StoredObject> {
    const hash = createHash('sha256');
    let size = 0;
    const pool = new BufferPool(PART_BYTES, PARTS_IN_FLIGHT + 1);
    let upload: MultipartUpload | undefined;
    // The first part is held until a second shows there is more: a small object (a change log chunk) goes
    // in one request, not three.
    let first: Buffer | undefined;
    const checksum = `${name}${CHECKSUM_SUFFIX}`;
    /** The checksum file before this put wrote its own: undefined until it has, '' when there was none. */
    let replaced: string | undefined;
    /** Whether the object under the name is still the one from before this put (false from its last request on). */
    let unchanged = true;
    try {
      for await (const part of filledParts(data, pool)) {
        hash.update(part);
        size += part.length;
        if (!first && !upload) {
          first = part;
          continue;
        }
        if (part.length === 0) break;
        upload ??= await MultipartUpload.start(this.client, this.s.bucket, name, pool);
        if (first) upload.send(first);
        first = undefined;
        upload.send(part);
      }
      await upload?.allSent();
      const sha256 = hash.digest('hex');
      // The sha256 goes first and the object appears last (a multipart upload is invisible until completed):
      // a put cut short at any point, the operator killed included, leaves no object without its sha256,
      // which nothing could read back but a change log would count as stored; and an object it replaces
      // still reads back meanwhile (`checksumText`).
      const previous = await this.checksumOf(name);
      await this.putChecksum(checksum, checksumText(sha256, previous));
      replaced = previous;
      unchanged = false;
      try {
        if (upload) await upload.complete();
        else await this.client.send(new PutObjectCommand({ Bucket: this.s.bucket, Key: name, Body: first ?? Buffer.alloc(0) }));
      } catch (err) {
        // A store that answered "no" did nothing; no answer may still have made the new object appear.
        unchanged = refusedByStore(err);
        throw err;
      }
      if (previous) await this.putChecksum(checksum, checksumText(sha256));
      return { name, size, sha256 };
    } catch (err) {
      await upload?.abort();
      // Best effort, and only where the new object is known not to have appeared: the checksum file goes back
      // to what it was (a sha256 alone lists nothing, but it would stand beside a later object of that name).
      if (replaced !== undefined && unchanged) {
        await (replaced ? this.putChecksum(checksum, replaced) : this.client.send(new DeleteObjectsCommand({ Bucket: this.s.bucket, Delete: { Objects: [{ Key: checksum }] } }))).catch(() => undefined);
      }
      throw err;
    }
  }

  private async putChecksum(key: string, text: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.s.bucket, Key: key, Body: text }));
  }

  /** The text of the object's checksum file, '' when it has none; a store that cannot be asked is an error, not a missing sha256. */
  private async checksumOf(name: string): Promise<string> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.s.bucket, Key: `${name}${CHECKSUM_SUFFIX}` }));
      return (await answer.Body?.transformToString()) ?? '';
    } catch (err) {
      if ((err as Error).name === 'NoSuchKey') return '';
      throw err;
    }
  }

  async *get(name: string): AsyncIterable<Buffer> {
    yield* verified(name, await this.openUnchecked(name));
  }

  async openUnchecked(name: string): Promise<StoredBytes> {
    const sums = await this.checksumOf(name);
    // No sha256: the object itself may be missing too (a mistyped path), which is what to say then.
    if (!sums) await this.client.send(new HeadObjectCommand({ Bucket: this.s.bucket, Key: name })).catch(notFoundAsNoSuchKey(name));
    const accepted = checksumsOf(name, sums);
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.s.bucket, Key: name }));
    if (!object.Body) throw new Error(`${name}: empty answer`);
    return { data: object.Body as Readable, accepted };
  }

  async list(prefix: string): Promise<string[]> {
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.s.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) if (o.Key) names.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return committed(names);
  }

  async remove(name: string): Promise<void> {
    await this.client.send(new DeleteObjectsCommand({ Bucket: this.s.bucket, Delete: { Objects: [{ Key: name }, { Key: `${name}${CHECKSUM_SUFFIX}` }] } }));
  }

  destroy(): void {
    this.client.destroy();
  }
}

/** A HEAD's "not found" (it has no body to name the code) as the NoSuchKey a GET would answer; anything else as it came. */
const notFoundAsNoSuchKey = (name: string) => (err: unknown): never => {
  if ((err as Error).name === 'NotFound') throw Object.assign(new Error(`${name}: NoSuchKey`), { name: 'NoSuchKey' });
  throw err;
};
