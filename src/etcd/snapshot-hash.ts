import { createHash } from 'node:crypto';
import { acceptSha256, asBuffer } from '../storage/storage.js';

/** Why `etcdutl snapshot restore` would refuse a snapshot, found before it runs. */
export class SnapshotRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotRejected';
  }
}

const HASH_BYTES = 32;
/** etcd's database is whole 512-byte sectors: a snapshot with its hash appended is 32 bytes past a multiple of them. */
const SECTOR = 512;

/**
 * Passes a snapshot's bytes through while checking what `etcdutl snapshot restore` checks first: a snapshot from
 * etcd ends with the sha256 of everything before it. A restore that fails there would leave a partial data
 * directory behind and fail every retry with "data-dir not empty", hiding the cause; found here (by a member's
 * fetch step), it is refused with the cause before etcdutl runs. Only the last 32 bytes are held back at any time.
 *
 * Given `storedSums` (the sha256s the store accepts for these very bytes: a snapshot stored as it is, not sealed),
 * the same pass checks them too, ChecksumMismatch first as the store's own check would: the store's sha256 is of
 * the bytes etcd's hash covers and then of that hash, so it is the running hash carried on over the last 32 bytes.
 * Hashing a gigabyte twice was a third of a restore's fetch.
 */
export async function* etcdChecked(name: string, source: AsyncIterable<Uint8Array>, storedSums?: readonly string[]): AsyncIterable<Buffer> {
  const hash = createHash('sha256');
  let tail = Buffer.alloc(0);
  let size = 0;
  const release = function* (bytes: Buffer): Iterable<Buffer> {
    hash.update(bytes);
    yield bytes;
  };
  for await (const chunk of source) {
    const bytes = asBuffer(chunk);
    size += bytes.length;
    if (bytes.length >= HASH_BYTES) {
      // The chunk is passed on as it came, not joined to the tail held back: a copy of every byte of a gigabyte
      // (and as much garbage) for 32 of them.
      if (tail.length > 0) yield* release(tail);
      if (bytes.length > HASH_BYTES) yield* release(bytes.subarray(0, bytes.length - HASH_BYTES));
      tail = Buffer.from(bytes.subarray(bytes.length - HASH_BYTES));
      continue;
    }
    const joined = Buffer.concat([tail, bytes]);
    const passed = joined.length - HASH_BYTES;
    if (passed > 0) yield* release(joined.subarray(0, passed));
    tail = joined.subarray(Math.max(0, passed));
  }
  if (storedSums) {
    const whole = hash.copy().update(tail);
    acceptSha256(name, storedSums, whole.digest('hex'));
  }
  if (size % SECTOR !== HASH_BYTES) {
    throw new SnapshotRejected(`${name} (${size} bytes) is not an etcd snapshot with its integrity hash (a snapshot is whole 512-byte pages and a 32-byte sha256); etcdutl would refuse it`);
  }
  const computed = hash.digest();
  if (!computed.equals(tail)) {
    throw new SnapshotRejected(`${name}: etcd's own sha256 at its end (${tail.toString('hex')}) does not match its content (${computed.toString('hex')}): the snapshot was damaged before it was stored; etcdutl would refuse it`);
  }
  yield tail;
}
