import { createHash } from 'node:crypto';

/** What a backup wrote: its name in the store, its size and the sha256 stored beside it. */
export interface StoredObject {
  name: string;
  size: number;
  sha256: string;
}

/**
 * Where snapshots are kept. Data is streamed in and out, never held whole; each object has its sha256
 * beside it (`<name>.sha256`), checked on every read. The sha256 is the commit: it is written before the
 * object appears, so a put cut short at any point leaves no object without it, and an object without it
 * (which could not be read back) is never listed.
 */
export interface BackupStorage {
  put(name: string, data: AsyncIterable<Uint8Array>): Promise<StoredObject>;
  /** The object's bytes; the iteration throws ChecksumMismatch at its end if they differ from the stored sha256. */
  get(name: string): AsyncIterable<Buffer>;
  /**
   * Names of the objects that start with `prefix` and have their sha256 beside them, in name order. A change
   * log resumes after the last chunk listed and a restore starts from the newest snapshot listed: one whose
   * put never finished would be revisions reported stored that no restore can bring back.
   */
  list(prefix: string): Promise<string[]>;
  /** Removes an object and its checksum. */
  remove(name: string): Promise<void>;
}

export const CHECKSUM_SUFFIX = '.sha256';

/** Of the names found under a prefix (objects and their sha256 alike), the objects that have their sha256. */
export function committed(names: Iterable<string>): string[] {
  const all = new Set(names);
  return [...all].filter((n) => !n.endsWith(CHECKSUM_SUFFIX) && all.has(`${n}${CHECKSUM_SUFFIX}`)).sort();
}

export class ChecksumMismatch extends Error {
  constructor(readonly object: string, readonly expected: string, readonly actual: string) {
    super(expected
      ? `${object}: sha256 ${actual} does not match the stored ${expected}; the backup is corrupt or incomplete`
      // A snapshot taken by etcdctl or the CoreOS operator has none: say how to give it one.
      : `${object}: no sha256 beside it (${object}${CHECKSUM_SUFFIX}), so it cannot be checked; every backup this operator takes has one. `
        + `For a snapshot taken elsewhere that you trust, store its sha256 there (sha256sum FILE > FILE${CHECKSUM_SUFFIX})`);
    this.name = 'ChecksumMismatch';
  }
}

/** Passes the bytes through while counting and hashing them; `result()` is final once the iteration ends. */
export function measured(source: AsyncIterable<Uint8Array>): { data: AsyncIterable<Buffer>; result: () => { size: number; sha256: string } } {
  const hash = createHash('sha256');
  let size = 0;
  let digest = '';
  async function* pass(): AsyncIterable<Buffer> {
    for await (const chunk of source) {
      // A view, not a copy (Buffer.from copies a Uint8Array): a snapshot passes through here whole.
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      hash.update(b);
      size += b.length;
      yield b;
    }
    digest = hash.digest('hex');
  }
  return { data: pass(), result: () => ({ size, sha256: digest }) };
}

/** Yields the bytes, then throws if their sha256 is not `expected`. */
export async function* verified(name: string, source: AsyncIterable<Uint8Array>, expected: string): AsyncIterable<Buffer> {
  const m = measured(source);
  yield* m.data;
  const { sha256 } = m.result();
  if (sha256 !== expected.trim().split(/\s+/)[0]) throw new ChecksumMismatch(name, expected.trim(), sha256);
}
