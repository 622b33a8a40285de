import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { SnapshotRejected, etcdChecked } from '../../src/etcd/snapshot-hash.js';
import { ChecksumMismatch } from '../../src/storage/storage.js';

/** A snapshot as etcd sends one: whole 512-byte pages, then the sha256 of them. */
const snapshot = (pages: number): Buffer => {
  const db = randomBytes(pages * 512);
  return Buffer.concat([db, createHash('sha256').update(db).digest()]);
};

/** The bytes in uneven chunks (some shorter than the hash), as a stream brings them. */
const chunked = (bytes: Buffer): Buffer[] => {
  const chunks: Buffer[] = [];
  for (let at = 0, size = 1; at < bytes.length; at += size, size = (size * 5 + 3) % 9000 + 1) chunks.push(bytes.subarray(at, at + size));
  return chunks;
};

const drain = async (bytes: Buffer, storedSums?: string[]): Promise<Buffer> => {
  const out: Buffer[] = [];
  for await (const c of etcdChecked('snap.db', Readable.from(chunked(bytes)), storedSums)) out.push(c);
  return Buffer.concat(out);
};

test('a snapshot with its own sha256 passes through byte for byte, however it is chunked', async () => {
  const bytes = snapshot(300);
  assert.ok((await drain(bytes)).equals(bytes));
});

test('a snapshot whose sha256 does not match, or that has none, is refused as etcdutl would refuse it', async () => {
  const damaged = snapshot(40);
  damaged[1000] = (damaged[1000] ?? 0) ^ 1;
  await assert.rejects(drain(damaged), (err: unknown) => err instanceof SnapshotRejected && /does not match its content/.test(err.message));
  await assert.rejects(drain(randomBytes(40 * 512)), (err: unknown) => err instanceof SnapshotRejected && /not an etcd snapshot with its integrity hash/.test(err.message));
});

test('in the same pass, the store\'s sha256 of the whole object is checked too, and a mismatch is said as the store\'s before etcd\'s', async () => {
  const bytes = snapshot(50);
  const whole = createHash('sha256').update(bytes).digest('hex');
  assert.ok((await drain(bytes, ['0'.repeat(64), whole])).equals(bytes), 'any sum the checksum file accepts');
  await assert.rejects(drain(bytes, ['0'.repeat(64)]), (err: unknown) => err instanceof ChecksumMismatch && err.message.includes(`sha256 ${whole} does not match`));
  const damaged = Buffer.from(bytes);
  damaged[700] = (damaged[700] ?? 0) ^ 1;
  await assert.rejects(drain(damaged, [whole]), (err: unknown) => err instanceof ChecksumMismatch, 'the stored sha256 first, as the store\'s own read would');
  const tiny = Buffer.from('short');
  await assert.rejects(drain(tiny, [createHash('sha256').update(tiny).digest('hex')]), (err: unknown) => err instanceof SnapshotRejected, 'fewer bytes than a hash: the sum is of them all');
});

test('the store\'s sha256 in the same pass holds for any length and any chunking, and a tampered object matches none of several sums', async () => {
  const sum = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
  const through = async (bytes: Buffer, chunk: number, sums: string[]): Promise<Buffer> => {
    const out: Buffer[] = [];
    const chunks = Array.from({ length: Math.ceil(bytes.length / chunk) }, (_, i) => bytes.subarray(i * chunk, (i + 1) * chunk));
    for await (const c of etcdChecked('snap.db', Readable.from(chunks), sums)) out.push(c);
    return Buffer.concat(out);
  };
  for (const length of [0, 7, 31, 32, 33]) {
    const bytes = randomBytes(length);
    for (const chunk of [1, 31]) {
      await assert.rejects(through(bytes, chunk, [sum(bytes)]), (err: unknown) => err instanceof SnapshotRejected, `${length} bytes in ${chunk}-byte chunks: its sum matches, it is no snapshot`);
      await assert.rejects(through(bytes, chunk, [sum(Buffer.from('x'))]), (err: unknown) => err instanceof ChecksumMismatch, `${length} bytes in ${chunk}-byte chunks: a wrong sum first`);
    }
  }
  const good = snapshot(3);
  for (const chunk of [1, 31, 33, 512]) assert.ok((await through(good, chunk, [sum(good)])).equals(good), `${chunk}-byte chunks`);
  const tampered = Buffer.from(good);
  tampered[good.length - 1] = (tampered[good.length - 1] ?? 0) ^ 1;
  await assert.rejects(through(tampered, 31, [sum(good), sum(Buffer.from('older'))]), (err: unknown) => err instanceof ChecksumMismatch && err.message.includes(' or '), 'a change in etcd\'s own hash is a change of the object');
});

test('a source that fails partway is said as its own failure, not as a refused snapshot', async () => {
  async function* failing(): AsyncIterable<Buffer> {
    yield await Promise.resolve(randomBytes(4096));
    throw new Error('connection reset');
  }
  await assert.rejects(async () => { for await (const c of etcdChecked('snap.db', failing(), ['0'.repeat(64)])) assert.ok(c.length >= 0); }, /connection reset/);
});
