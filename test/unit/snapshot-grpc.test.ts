import { test } from 'node:test';
import assert from 'node:assert/strict';
import { snapshotBlob } from '../../src/etcd/snapshot-grpc.js';

const varint = (n: number): number[] => {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) { out.push((v % 128) | 0x80); v = Math.floor(v / 128); }
  out.push(v);
  return out;
};
const field = (num: number, wire: number, body: number[]): number[] => [...varint((num << 3) | wire), ...body];
const bytes = (num: number, b: Buffer): number[] => field(num, 2, [...varint(b.length), ...b]);

test('a SnapshotResponse yields its blob, whatever other fields come with it', () => {
  const blob = Buffer.alloc(300, 7);
  const header = Buffer.from(field(1, 0, varint(123456789)).concat(field(3, 0, varint(42))));
  const message = Buffer.from([...bytes(1, header), ...field(2, 0, varint(2 ** 40)), ...bytes(3, blob), ...bytes(4, Buffer.from('3.6.5'))]);
  assert.deepEqual(snapshotBlob(message), blob);
  assert.equal(snapshotBlob(Buffer.from(field(2, 0, varint(0)))).length, 0, 'the last message may carry no blob');
});
