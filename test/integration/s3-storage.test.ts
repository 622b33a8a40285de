import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { GetObjectCommand, ListMultipartUploadsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { S3Storage } from '../../src/storage/s3.js';
import { CHECKSUM_SUFFIX, ChecksumMismatch } from '../../src/storage/storage.js';
import { eventually } from '../support/lab.js';
import { startMinio, storedKeys } from '../support/minio.js';
import type { Minio } from '../support/minio.js';
import { storeRelay } from '../support/store-relay.js';

/** A loopback TCP relay to `target` that keeps the request heads the client sent through it. */
async function recordingRelay(t: { after(fn: () => unknown): void }, target: URL): Promise<{ endpoint: string; heads: () => string[] }> {
  const sent: Buffer[] = [];
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    client.on('data', (chunk: Buffer) => sent.push(chunk));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    heads: () => Buffer.concat(sent).toString('latin1').match(/(?:PUT|POST|GET) \/\S+ HTTP\/1\.1\r\n(?:[^\r\n]+\r\n)*\r\n/g) ?? [],
  };
}

/** S3 storage on the bucket `snapshots` of `minio`, reached through `endpoint` (a relay's); destroyed when the test ends. */
function snapshotsVia(t: { after(fn: () => unknown): void }, minio: Minio, endpoint: string): S3Storage {
  const storage = new S3Storage({ bucket: 'snapshots', endpoint, forcePathStyle: true, region: 'us-east-1', accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey });
  t.after(() => { storage.destroy(); });
  return storage;
}

async function drain(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const read: Buffer[] = [];
  for await (const c of it) read.push(c);
  return Buffer.concat(read);
}

const header = (head: string, name: string): string | undefined => new RegExp(`^${name}: (.*)$`, 'mi').exec(head)?.[1]?.trim();

test('S3 storage on a real MinIO: parts go unsigned, the checksum object is signed, and a changed object is refused on read', async (t) => {
  const minio = await startMinio(t, 'snapshots');
  const relay = await recordingRelay(t, new URL(minio.endpoint));
  const storage = snapshotsVia(t, minio, relay.endpoint);

  // 14 MiB: three parts of a multipart upload (5 MiB, 5 MiB, 4 MiB).
  const data = randomBytes(14 * 1024 * 1024);
  const chunks = Array.from({ length: 14 }, (_, i) => data.subarray(i << 20, (i + 1) << 20));
  const stored = await storage.put('c/snap.db', Readable.from(chunks));
  assert.deepEqual(stored, { name: 'c/snap.db', size: data.length, sha256: createHash('sha256').update(data).digest('hex') });

  const heads = relay.heads().filter((h) => h.startsWith('PUT '));
  const parts = heads.filter((h) => /[?&]partNumber=/.test(h.split('\r\n')[0] ?? ''));
  assert.equal(parts.length, 3, 'a multipart upload of three parts');
  assert.deepEqual(parts.map((h) => header(h, 'x-amz-content-sha256')), ['UNSIGNED-PAYLOAD', 'UNSIGNED-PAYLOAD', 'UNSIGNED-PAYLOAD']);
  const checksumPut = heads.find((h) => (h.split('\r\n')[0] ?? '').includes('/snapshots/c/snap.db.sha256'));
  assert.match(header(checksumPut ?? '', 'x-amz-content-sha256') ?? '', /^[0-9a-f]{64}$/, 'the checksum object is sent with its payload signed');

  assert.ok((await drain(storage.get('c/snap.db'))).equals(data), 'read back whole');

  // Bytes changed on the way or at rest: the signed checksum beside the object catches them.
  const changed = Buffer.from(data);
  changed[12345] = (changed[12345] ?? 0) ^ 1;
  await minio.client.send(new PutObjectCommand({ Bucket: 'snapshots', Key: 'c/snap.db', Body: changed }));
  await assert.rejects(async () => { for await (const c of storage.get('c/snap.db')) assert.ok(c.length > 0); }, (err: unknown) => err instanceof ChecksumMismatch);
});

test('S3 storage on a real MinIO: a small object in one request, an empty one, a part boundary at the end, and a stream that fails mid-way leaves nothing', async (t) => {
  const minio = await startMinio(t, 'snapshots');
  const relay = await recordingRelay(t, new URL(minio.endpoint));
  const storage = snapshotsVia(t, minio, relay.endpoint);
  const readBack = (name: string): Promise<Buffer> => drain(storage.get(name));
  const partRequests = (): number => relay.heads().filter((h) => /^PUT \S*[?&]partNumber=/.test(h)).length;

  const small = randomBytes(100_000);
  await storage.put('small', Readable.from([small.subarray(0, 30_000), small.subarray(30_000)]));
  assert.ok((await readBack('small')).equals(small));
  await storage.put('empty', Readable.from([]));
  assert.equal((await readBack('empty')).length, 0);
  assert.equal(partRequests(), 0, 'objects under one part go in a single request each');

  // Exactly two 5 MiB parts: no empty third part is sent.
  const even = randomBytes(10 * 1024 * 1024);
  await storage.put('even', Readable.from([even]));
  assert.ok((await readBack('even')).equals(even));
  assert.equal(partRequests(), 2);

  // The snapshot stream breaks after 20 MiB: the upload is aborted, no object and no parts are left behind.
  async function* broken(): AsyncIterable<Buffer> {
    for (let i = 0; i < 20; i++) yield randomBytes(1024 * 1024);
    await Promise.resolve();
    throw new Error('snapshot: connection reset');
  }
  await assert.rejects(storage.put('broken', broken()), /connection reset/);
  assert.deepEqual(await storedKeys(minio, 'snapshots', 'broken'), []);
  const pending = await minio.client.send(new ListMultipartUploadsCommand({ Bucket: 'snapshots', Prefix: 'broken' }));
  assert.deepEqual(pending.Uploads ?? [], [], 'the multipart upload was aborted');
});

test('S3 storage on a real MinIO: the sha256 is written before the object appears, so a put cut at its sha256 leaves nothing; an object without its sha256 is not listed', async (t) => {
  const minio = await startMinio(t, 'snapshots');
  const relay = await storeRelay(t, minio.endpoint);
  const storage = snapshotsVia(t, minio, relay.endpoint);

  relay.refuse((method, path) => method === 'PUT' && (path.split('?')[0] ?? '').endsWith(CHECKSUM_SUFFIX));
  // A multipart upload (20 MiB) and a single request (a change log chunk's size).
  await assert.rejects(storage.put('c/big.db', Readable.from([randomBytes(20 * 1024 * 1024)])));
  await assert.rejects(storage.put('c/chunk', Readable.from([randomBytes(1000)])));
  assert.ok(relay.refused.length >= 2, 'both sha256 writes were cut');
  assert.deepEqual(await storedKeys(minio, 'snapshots', 'c/'), [], 'no object is left without its sha256');
  const pending = await minio.client.send(new ListMultipartUploadsCommand({ Bucket: 'snapshots', Prefix: 'c/' }));
  assert.deepEqual(pending.Uploads ?? [], [], 'the multipart upload was aborted');

  relay.heal();
  // An object put by something else (or by a writer killed between its two writes) without a sha256.
  await minio.client.send(new PutObjectCommand({ Bucket: 'snapshots', Key: 'c/orphan.db', Body: 'x' }));
  await storage.put('c/ok.db', Readable.from([Buffer.from('y')]));
  assert.deepEqual(await storage.list('c/'), ['c/ok.db']);
  // Read by name (a restore's path), it is refused for its missing sha256 before a byte is read; a name with no
  // object at all is not found (a mistyped path), not a backup without its sha256.
  await assert.rejects(drain(storage.get('c/orphan.db')), (err: unknown) => err instanceof ChecksumMismatch && /no sha256 beside it/.test(err.message));
  await assert.rejects(drain(storage.get('c/typo.db')), (err: unknown) => (err as Error).name === 'NoSuchKey');
});

test('S3 storage on a real MinIO: a put that replaces an object and fails at its last request, or is held there (its writer killed), leaves the object it replaces readable', async (t) => {
  const minio = await startMinio(t, 'snapshots');
  const relay = await storeRelay(t, minio.endpoint);
  const storage = snapshotsVia(t, minio, relay.endpoint);
  const readBack = (name: string): Promise<Buffer> => drain(storage.get(name));
  const sumText = async (name: string): Promise<string> => (await (await minio.client.send(new GetObjectCommand({ Bucket: 'snapshots', Key: `${name}${CHECKSUM_SUFFIX}` }))).Body?.transformToString()) ?? '';
  const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
  // The request that makes each kind of object appear: a multipart upload's completion, a small object's PUT.
  const completing = (method: string, path: string): boolean => method === 'POST' && /[?&]uploadId=/.test(path);
  const smallPut = (method: string, path: string): boolean => method === 'PUT' && path.split('?')[0] === '/snapshots/c/small.db';

  // A one-shot backup taken, then taken again: 20 MiB (a multipart upload) and 1 KB (one request).
  const first = randomBytes(20 * 1024 * 1024);
  const firstSmall = randomBytes(1000);
  await storage.put('c/once.db', Readable.from([first]));
  await storage.put('c/small.db', Readable.from([firstSmall]));

  // The link breaks for the request that would make the replacement appear: both puts fail.
  relay.refuse((method, path) => completing(method, path) || smallPut(method, path));
  await assert.rejects(storage.put('c/once.db', Readable.from([randomBytes(20 * 1024 * 1024)])));
  await assert.rejects(storage.put('c/small.db', Readable.from([randomBytes(1000)])));
  assert.ok(relay.refused.some((r) => completing(r.method, r.path)) && relay.refused.some((r) => smallPut(r.method, r.path)), `both were cut: ${JSON.stringify(relay.refused)}`);
  assert.deepEqual(await storage.list('c/'), ['c/once.db', 'c/small.db'], 'the objects they would have replaced are still listed');
  assert.ok((await readBack('c/once.db')).equals(first), 'and read back through their sha256');
  assert.ok((await readBack('c/small.db')).equals(firstSmall));

  // The writer stops for good just before the replacement appears (killed there): the old object reads back.
  relay.heal();
  relay.hold(completing, 1);
  const second = randomBytes(20 * 1024 * 1024);
  const replacing = storage.put('c/once.db', Readable.from([second]));
  await eventually('the replacement\'s completion held', 30_000, () => Promise.resolve(relay.held.length === 1 ? true : undefined));
  assert.ok((await readBack('c/once.db')).equals(first), 'the object in place reads back while its replacement is pending');
  // The held request is cut and sent again: the replacement appears, and its sha256 alone stays.
  relay.heal();
  assert.equal((await replacing).sha256, sha(second));
  assert.ok((await readBack('c/once.db')).equals(second));
  assert.equal(await sumText('c/once.db'), `${sha(second)}\n`);
});
