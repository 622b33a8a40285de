import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { BufferPool, filledParts } from '../../src/storage/parts.js';
import { MultipartUpload } from '../../src/storage/multipart.js';

/** The bytes in chunks of the given sizes, counting how many bytes have been read. */
function source(bytes: Buffer, sizes: number[]): { chunks: AsyncIterable<Buffer>; read: () => number } {
  let read = 0;
  async function* chunks(): AsyncIterable<Buffer> {
    for (let at = 0, i = 0; at < bytes.length; i++) {
      await Promise.resolve();
      const n = Math.min(sizes[i % sizes.length] ?? 1, bytes.length - at);
      read = at + n;
      yield bytes.subarray(at, at + n);
      at += n;
    }
  }
  return { chunks: chunks(), read: () => read };
}

test('parts: every part full but the last, the bytes in order, whatever the chunks; a part boundary at the end leaves an empty last part', async () => {
  for (const [length, sizes] of [[100, [7]], [64, [16]], [1000, [1, 33, 250]], [0, [5]], [10, [64]]] as [number, number[]][]) {
    const bytes = randomBytes(length);
    const pool = new BufferPool(16, 2);
    const parts: Buffer[] = [];
    for await (const part of filledParts(source(bytes, sizes).chunks, pool)) {
      parts.push(Buffer.from(part));
      pool.give(part);
    }
    assert.ok(Buffer.concat(parts).equals(bytes), `${length} bytes in chunks of ${sizes.join(',')}`);
    assert.ok(parts.slice(0, -1).every((p) => p.length === 16), 'all but the last are full');
    assert.equal(parts.at(-1)?.length, length % 16, 'the last holds the rest');
  }
});

test('parts: with every buffer of the pool out, the source is not read further until one is given back', async () => {
  const bytes = randomBytes(100);
  const src = source(bytes, [4]);
  const pool = new BufferPool(16, 2);
  const parts = filledParts(src.chunks, pool);
  const first = await parts.next();
  const second = await parts.next();
  assert.equal(src.read(), 32, 'two parts filled');
  const got: { third?: IteratorResult<Buffer> } = {};
  const pending = parts.next().then((r) => { got.third = r; });
  const third = (): IteratorResult<Buffer> | undefined => got.third;
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(third(), undefined, 'no third part while both buffers are out');
  assert.equal(src.read(), 32, 'and nothing more read');
  pool.give(first.value as Buffer);
  await pending;
  assert.ok((third()?.value as Buffer).equals(bytes.subarray(32, 48)), 'the third part, in the buffer given back');
  assert.equal((third()?.value as Buffer).buffer, (first.value as Buffer).buffer, 'the same memory used again');
  assert.ok((second.value as Buffer).equals(bytes.subarray(16, 32)));
});

test('multipart: part 10,001 is refused as past S3\'s limit, before it is sent; every part before it was sent', async () => {
  let sent = 0;
  // The store's side: answers every request; only the upload's own bookkeeping is under test.
  const client = { send: (command: { constructor: { name: string } }) => {
    if (command.constructor.name === 'UploadPartCommand') sent++;
    return Promise.resolve({ UploadId: 'upload', ETag: `"${sent}"` });
  } } as unknown as S3Client;
  const pool = new BufferPool(16, 1);
  const upload = await MultipartUpload.start(client, 'bucket', 'big', pool);
  for (let i = 0; i < 10_000; i++) {
    upload.send(await pool.take());
    await upload.allSent();
  }
  const last = await pool.take();
  assert.throws(() => { upload.send(last); }, /big: more than 10000 parts of 16 bytes, S3's limit/);
  assert.equal(sent, 10_000);
});
