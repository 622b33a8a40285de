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
 * (which could not be read back) is never listed. A put that replaces an object (a one-shot backup taken
 * again) writes its sha256 beside the ones of the object in place (`checksumText`), and the object in place
 * reads back until the new one appears: a replacement that fails, or is cut short, never costs the last
 * good backup.
 */
export interface BackupStorage {
  put(name: string, data: AsyncIterable<Uint8Array>): Promise<StoredObject>;
  /** The object's bytes; the iteration throws ChecksumMismatch at its end if they differ from the stored sha256. */
  get(name: string): AsyncIterable<Buffer>;
  /**
   * The object's bytes unchecked, with the sha256s they must have: for a reader that hashes the bytes anyway and
   * checks them itself (restorableSnapshot, a restore's one pass); any other reads through get. An object without
   * its sha256 is refused here.
   */
  openUnchecked(name: string): Promise<StoredBytes>;
  /**
   * Names of the objects that start with `prefix` and have their sha256 beside them, in name order. A change
   * log resumes after the last chunk listed and a restore starts from the newest snapshot listed: one whose
   * put never finished would be revisions reported stored that no restore can bring back.
   */
  list(prefix: string): Promise<string[]>;
  /** Removes an object and its checksum. */
  remove(name: string): Promise<void>;
}

/** An object's bytes, not yet checked, and the sha256s its checksum file accepts (checksumsOf). */
export interface StoredBytes {
  data: AsyncIterable<Buffer>;
  accepted: readonly string[];
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

/**
 * The bytes as a Buffer without copying them (Buffer.from copies a Buffer or a Uint8Array): a snapshot passes
 * through whole, and a copy of each chunk is a gigabyte more to allocate and collect. A view is safe to hold: a
 * store's answer and a file's stream hand out each chunk once and never write into it again.
 */
export const asBuffer = (chunk: Uint8Array): Buffer => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));

/** Passes the bytes through while counting and hashing them; `result()` is final once the iteration ends. */
export function measured(source: AsyncIterable<Uint8Array>): { data: AsyncIterable<Buffer>; result: () => { size: number; sha256: string } } {
  const hash = createHash('sha256');
  let size = 0;
  let digest = '';
  async function* pass(): AsyncIterable<Buffer> {
    for await (const chunk of source) {
      const b = asBuffer(chunk);
      hash.update(b);
      size += b.length;
      yield b;
    }
    digest = hash.digest('hex');
  }
  return { data: pass(), result: () => ({ size, sha256: digest }) };
}

/**
 * The sha256s a checksum file accepts: the first word of each line (a line of `sha256sum`'s output names the
 * file after its sum).
 */
export function acceptedSums(text: string): string[] {
  return text.split('\n').map((line) => line.trim().split(/\s+/)[0] ?? '').filter((sum) => sum !== '');
}

/**
 * A checksum file's text: `sha256` first, then every sum the file it replaces (`replaced`) accepted. Written
 * before the object appears, so that until it does the object in place still reads back; once it has, the
 * put writes `sha256` alone. A put whose last request went unanswered cannot know which object is in place,
 * so it leaves both accepted: each is a whole object that it or an earlier put wrote, and a changed byte
 * matches neither.
 */
export function checksumText(sha256: string, replaced = ''): string {
  return [...new Set([sha256, ...acceptedSums(replaced)])].map((sum) => `${sum}\n`).join('');
}

/**
 * The sums an object's checksum file's text accepts; none (no file beside it) refuses the object before a byte of
 * it is read, since no read could end accepted: a gigabyte is not fetched only to be refused.
 */
export function checksumsOf(name: string, text: string): string[] {
  const accepted = acceptedSums(text);
  if (accepted.length === 0) throw new ChecksumMismatch(name, '', '');
  return accepted;
}

/** Yields the bytes, then throws if their sha256 is not one of the `accepted` (see checksumsOf). */
export async function* verified(name: string, { data, accepted }: StoredBytes): AsyncIterable<Buffer> {
  const m = measured(data);
  yield* m.data;
  acceptSha256(name, accepted, m.result().sha256);
}

/** Throws ChecksumMismatch unless `sha256` is one of the `accepted`. */
export function acceptSha256(name: string, accepted: readonly string[], sha256: string): void {
  if (!accepted.includes(sha256)) throw new ChecksumMismatch(name, accepted.join(' or '), sha256);
}
