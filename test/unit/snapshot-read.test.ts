import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { restorableSnapshot } from '../../src/storage/snapshot-read.js';
import { SealError, seal, sealingKey } from '../../src/storage/sealed.js';
import type { KeyRing } from '../../src/storage/sealed.js';
import { ChecksumMismatch } from '../../src/storage/storage.js';
import { SnapshotRejected } from '../../src/etcd/snapshot-hash.js';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
/** A snapshot as etcd sends one: whole 512-byte pages, then the sha256 of them. */
const snapshot = (pages: number): Buffer => {
  const db = randomBytes(pages * 512);
  return Buffer.concat([db, createHash('sha256').update(db).digest()]);
};
/** The object's bytes in 3-byte and 70,001-byte chunks: the first shorter than the seal's mark. */
const stored = (object: Buffer, accepted: string[]): { data: AsyncIterable<Buffer>; accepted: string[] } =>
  ({ data: Readable.from([object.subarray(0, 3), ...Array.from({ length: Math.ceil((object.length - 3) / 70_001) }, (_, i) => object.subarray(3 + i * 70_001, 3 + (i + 1) * 70_001))]), accepted });
const read = async (name: string, object: Buffer, accepted: string[], keys: KeyRing = new Map()): Promise<Buffer> => {
  const parts: Buffer[] = [];
  for await (const b of restorableSnapshot(name, stored(object, accepted), keys)) parts.push(Buffer.from(b));
  return Buffer.concat(parts);
};

test('a restore reads a plain snapshot byte for byte, checking the store\'s sha256 and etcd\'s own in one pass', async () => {
  const plain = snapshot(300);
  assert.ok((await read('plain.db', plain, [sha256(plain)])).equals(plain));
  await assert.rejects(read('plain.db', plain, [sha256(Buffer.from('other'))]), (err: unknown) => err instanceof ChecksumMismatch);
  const noEtcdHash = randomBytes(300 * 512);
  await assert.rejects(read('raw.db', noEtcdHash, [sha256(noEtcdHash)]), (err: unknown) => err instanceof SnapshotRejected);
});

test('a restore reads a sealed snapshot through its seal: the store\'s sha256 is of the sealed bytes, etcd\'s of the snapshot', async () => {
  const plain = snapshot(300);
  const key = sealingKey('k1', randomBytes(32));
  const keys: KeyRing = new Map([[key.id, key.key]]);
  for (const o of [{ codec: 'Gzip' as const }, { codec: 'None' as const, key }]) {
    const parts: Buffer[] = [];
    for await (const b of seal(Readable.from([plain]), o)) parts.push(Buffer.from(b));
    const object = Buffer.concat(parts);
    assert.ok((await read('sealed.db', object, [sha256(object)], o.key ? keys : new Map())).equals(plain), o.codec);
    await assert.rejects(read('sealed.db', object, [sha256(plain)], o.key ? keys : new Map()), (err: unknown) => err instanceof ChecksumMismatch, `${o.codec}: the sum of the sealed bytes, not of the snapshot`);
  }
  await assert.rejects(read('plain.db', plain, [sha256(plain)], keys), (err: unknown) => err instanceof SealError && err.reason === 'NotAuthentic', 'with keys given, a plain object is refused');
});

test('a reader that stops after the first block lets the store\'s answer go', async () => {
  const plain = snapshot(300);
  let closed = false;
  async function* answer(): AsyncIterable<Buffer> {
    try {
      for (let at = 0; at < plain.length; at += 4096) yield await Promise.resolve(plain.subarray(at, at + 4096));
    } finally {
      closed = true;
    }
  }
  for await (const block of restorableSnapshot('plain.db', { data: answer(), accepted: [sha256(plain)] }, new Map())) {
    assert.ok(block.length > 0);
    break;
  }
  assert.equal(closed, true);
});
