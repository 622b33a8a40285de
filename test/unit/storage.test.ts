import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DirectoryStorage } from '../../src/storage/directory.js';
import { ChecksumMismatch, acceptedSums, checksumText, checksumsOf, committed, measured, verified } from '../../src/storage/storage.js';
import { refusedByStore } from '../../src/storage/s3.js';
import { FILE_BLOCK_BYTES, writeInBlocks } from '../../src/storage/file-blocks.js';
import { datedPeriodicBackups, periodicName } from '../../src/storage/naming.js';
import { expired, parseTiers, tiersArg } from '../../src/storage/retention.js';
import { awsProfile } from '../../src/storage/aws-files.js';

/** n chunks of `size` bytes, as a stream would deliver them. */
const chunks = (n: number, size: number): AsyncIterable<Buffer> => Readable.from(Array.from({ length: n }, (_, i) => Buffer.alloc(size, i % 256)));

const drain = async (it: AsyncIterable<Buffer>): Promise<Buffer> => {
  const parts: Buffer[] = [];
  for await (const c of it) parts.push(c);
  return Buffer.concat(parts);
};

test('directory storage: streams in, checksum beside, verified out; a changed byte is refused; names cannot escape', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'backups-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const store = new DirectoryStorage(root);
  const written = await store.put('cluster/snap_v1', chunks(64, 1024));
  const expected = createHash('sha256').update(await drain(chunks(64, 1024))).digest('hex');
  assert.deepEqual(written, { name: 'cluster/snap_v1', size: 65536, sha256: expected });
  assert.equal((await drain(store.get('cluster/snap_v1'))).length, 65536);
  assert.deepEqual(await store.list('cluster/snap'), ['cluster/snap_v1']);

  const bytes = await drain(store.get('cluster/snap_v1'));
  bytes[100] = (bytes[100] ?? 0) ^ 0xff;
  writeFileSync(join(root, 'cluster/snap_v1'), bytes);
  await assert.rejects(drain(store.get('cluster/snap_v1')), (err: unknown) => err instanceof ChecksumMismatch && /does not match/.test(err.message));
  await store.remove('cluster/snap_v1');
  assert.deepEqual(await store.list('cluster/'), []);
  await assert.rejects(store.put('../outside', chunks(1, 1)), /not a path inside/);
});

test('an object is listed only with its sha256 beside it; a put that cannot write its sha256 leaves nothing', async (t) => {
  assert.deepEqual(committed(['a', 'a.sha256', 'b', 'c.sha256', 'd.partial', 'b.partial.sha256']), ['a'], 'data without its sha256, or a sha256 without its data, is not an object');
  const root = mkdtempSync(join(tmpdir(), 'backups-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const store = new DirectoryStorage(root);
  await store.put('cluster/snap_v1', chunks(4, 1024));
  // A put cut off after its data (a crash between the two writes): the data is there, its sha256 is not.
  writeFileSync(join(root, 'cluster/snap_v2'), 'never checked');
  assert.deepEqual(await store.list('cluster/snap'), ['cluster/snap_v1']);
  // Read by its name (a restore's path), it is refused, saying how a snapshot taken elsewhere gets its sha256.
  await assert.rejects(drain(store.get('cluster/snap_v2')), (err: unknown) => err instanceof ChecksumMismatch && /no sha256 beside it .*sha256sum FILE > FILE\.sha256/.test(err.message));
  // Refused before a byte is read: an object that would fail to read (a directory) fails for its missing sha256.
  mkdirSync(join(root, 'cluster/unread'));
  await assert.rejects(drain(store.get('cluster/unread')), (err: unknown) => err instanceof ChecksumMismatch && /no sha256 beside it/.test(err.message));
  // No object at all (a mistyped path) is said as such, not as an object without its sha256.
  await assert.rejects(drain(store.get('cluster/typo')), (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT');
  // Its sha256 cannot be written (a directory stands in its place): the put fails and takes its data away.
  mkdirSync(join(root, 'cluster/snap_v3.sha256'));
  await assert.rejects(store.put('cluster/snap_v3', chunks(4, 1024)), /EISDIR/);
  assert.equal(existsSync(join(root, 'cluster/snap_v3')), false);
  assert.deepEqual(await store.list('cluster/snap'), ['cluster/snap_v1']);
});

test('a put that replaces a file and fails leaves the file it replaces readable and nothing of its own; one that succeeds leaves its sha256 alone', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'backups-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const store = new DirectoryStorage(root);
  const first = await store.put('cluster/once.db', chunks(8, 1024));
  async function* broken(): AsyncIterable<Buffer> {
    yield Buffer.alloc(4096, 7);
    await Promise.resolve();
    throw new Error('snapshot: connection reset');
  }
  await assert.rejects(store.put('cluster/once.db', broken()), /connection reset/);
  assert.equal((await drain(store.get('cluster/once.db'))).length, 8 * 1024, 'the old file reads back through its sha256');
  assert.deepEqual(readdirSync(join(root, 'cluster')).sort(), ['once.db', 'once.db.sha256'], 'no partial file is left to fill the volume');
  assert.equal(readFileSync(join(root, 'cluster/once.db.sha256'), 'utf8'), `${first.sha256}\n`);

  const second = await store.put('cluster/once.db', chunks(2, 1024));
  assert.equal(readFileSync(join(root, 'cluster/once.db.sha256'), 'utf8'), `${second.sha256}\n`, 'the replaced file\'s sha256 is dropped once the new one is in place');
  // A checksum file that cannot be read is not taken for a missing one: the put stops before replacing anything.
  rmSync(join(root, 'cluster/once.db.sha256'));
  mkdirSync(join(root, 'cluster/once.db.sha256'));
  await assert.rejects(store.put('cluster/once.db', chunks(1, 10)), /EISDIR/);
  await assert.rejects(drain(store.get('cluster/once.db')), /EISDIR/);
});

test('a checksum file written for a replacement accepts the new object and the one in place, and nothing else', async () => {
  const [a, b, c] = ['a', 'b', 'c'].map((x) => createHash('sha256').update(x).digest('hex'));
  assert.equal(checksumText(b ?? '', `${a ?? ''}\n`), `${b ?? ''}\n${a ?? ''}\n`);
  assert.equal(checksumText(c ?? '', `${b ?? ''}\n${a ?? ''}\n`), `${c ?? ''}\n${b ?? ''}\n${a ?? ''}\n`, 'every object that may be in place stays accepted');
  assert.equal(checksumText(a ?? '', `${a ?? ''}\n`), `${a ?? ''}\n`, 'the same object twice is one line');
  assert.deepEqual(acceptedSums(`${a ?? ''}  snap.db\n`), [a], 'sha256sum\'s output: the sum, then the file name');
  for (const held of ['a', 'b']) assert.equal((await drain(verified('o', { data: Readable.from([Buffer.from(held)]), accepted: checksumsOf('o', `${b ?? ''}\n${a ?? ''}\n`) }))).toString(), held);
  await assert.rejects(drain(verified('o', { data: Readable.from([Buffer.from('c')]), accepted: checksumsOf('o', `${b ?? ''}\n${a ?? ''}\n`) })), (err: unknown) => err instanceof ChecksumMismatch && err.message.includes(' or '));
});

test('a store\'s answer says a request did nothing only when it refused it; no answer, a retried server error or a missing upload leave it open', () => {
  const answered = (httpStatusCode?: number): unknown => Object.assign(new Error('x'), { $metadata: httpStatusCode === undefined ? {} : { httpStatusCode } });
  assert.equal(refusedByStore(answered(400)), true);
  assert.equal(refusedByStore(answered(403)), true);
  assert.equal(refusedByStore(answered(404)), false, 'no such upload: a try before may have completed it');
  assert.equal(refusedByStore(answered(500)), false);
  assert.equal(refusedByStore(answered(503)), false);
  assert.equal(refusedByStore(answered()), false, 'a connection cut before any answer');
  assert.equal(refusedByStore(new Error('ECONNRESET')), false);
});

test('periodic backup names follow CoreOS, order by time, and retention keeps the newest', () => {
  const base = 'etcd/backups/example';
  assert.equal(periodicName(base, 42, new Date('2026-11-22T03:04:05.678Z')), 'etcd/backups/example_v42_2026-11-22-03:04:05');
  const names = [
    periodicName(base, 100, new Date('2026-11-22T03:00:03Z')), periodicName(base, 99, new Date('2026-11-22T03:00:02Z')),
    periodicName(base, 7, new Date('2026-11-22T03:00:01Z')), 'etcd/backups/other_v1_2026-11-22-03:00:00', `${base}.sha256`,
  ];
  assert.deepEqual(datedPeriodicBackups(names, base).map((b) => b.revision), [7, 99, 100]);
  const now = Date.parse('2026-11-22T04:00:00Z');
  assert.deepEqual(expired(names, base, { maxBackups: 2, tiers: [] }, now), [periodicName(base, 7, new Date('2026-11-22T03:00:01Z'))]);
  assert.deepEqual(expired(names, base, { maxBackups: 0, tiers: [] }, now), [], 'keep everything when unset');
});

test('two backups whose paths share a prefix in one bucket (prod, prod_v2) never count each other\'s snapshots', () => {
  const prod = 'etcd/prod';
  const other = 'etcd/prod_v2';
  const at = (s: number): Date => new Date(Date.parse('2026-11-22T03:00:00Z') + s * 1000);
  const names = [periodicName(prod, 10, at(1)), periodicName(other, 500, at(2)), periodicName(other, 600, at(3)), periodicName(prod, 20, at(4))];
  assert.deepEqual(datedPeriodicBackups(names, prod).map((b) => b.name), [periodicName(prod, 10, at(1)), periodicName(prod, 20, at(4))]);
  assert.deepEqual(datedPeriodicBackups(names, other).map((b) => b.revision), [500, 600]);
  // prod's retention of one: its own older snapshot goes, prod_v2's are not its to judge.
  assert.deepEqual(expired(names, prod, { maxBackups: 1, tiers: [] }, Date.parse('2026-11-22T04:00:00Z')), [periodicName(prod, 10, at(1))]);
});

test('the CoreOS awsSecret files: credentials and region from the default profile', () => {
  const creds = '[default]\naws_access_key_id = AKID\n# keys\naws_secret_access_key = s3cr3t#x\n[other]\naws_access_key_id = no\n';
  assert.deepEqual(awsProfile(creds, '[default]\nregion = eu-west-1\n'), { accessKeyId: 'AKID', secretAccessKey: 's3cr3t#x', region: 'eu-west-1' });
  assert.equal(awsProfile(creds, '').region, 'us-east-1');
  assert.throws(() => awsProfile('[other]\naws_access_key_id = x\n', ''), /no \[default\]/);
});

test('measured: passes each chunk on as it is (no copy), then its size and sha256', async () => {
  const given = [Buffer.from('ab'), Buffer.from('cde')];
  const m = measured(Readable.from(given));
  const passed: Buffer[] = [];
  for await (const b of m.data) passed.push(b);
  assert.ok(passed.every((b, i) => b === given[i]), 'the same buffers, not copies');
  assert.deepEqual(m.result(), { size: 5, sha256: createHash('sha256').update('abcde').digest('hex') });
});

test('writeInBlocks: the same bytes in 1 MiB blocks, the rest last, through two reused buffers, flushed as it goes', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'blocks-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const file = await open(join(root, 'f'), 'w');
  t.after(() => file.close());
  const writes: number[] = [];
  const buffers = new Set<ArrayBufferLike>();
  let flushes = 0;
  // The real file, with each call recorded on its way.
  const recorded = Object.assign(Object.create(file) as FileHandle, {
    write: (b: Buffer) => { writes.push(b.length); buffers.add(b.buffer); return file.write(b); },
    datasync: () => { flushes++; return file.datasync(); },
  });
  const KIB = 1024;
  await writeInBlocks(recorded, chunks(10, 300 * KIB), { flushEveryBytes: 2 * FILE_BLOCK_BYTES });
  assert.deepEqual(writes, [FILE_BLOCK_BYTES, FILE_BLOCK_BYTES, 3000 * KIB - 2 * FILE_BLOCK_BYTES]);
  assert.equal(buffers.size, 2, 'two blocks used in turn, none made per write');
  assert.equal(flushes, 1, 'one flush after the first 2 MiB');
  assert.ok(readFileSync(join(root, 'f')).equals(await drain(chunks(10, 300 * KIB))));
});

test('tiered retention over a simulated month (a backup every 10 minutes, retention after each): every hour for a day, every day for a month, exactly', () => {
  const base = 'b/x';
  const HOUR = 3600;
  const DAY = 24 * HOUR;
  const retention = { maxBackups: 0, tiers: [{ everySeconds: HOUR, forSeconds: DAY }, { everySeconds: DAY, forSeconds: 30 * DAY }] };
  let stored: string[] = [];
  const start = Date.parse('2026-01-01T00:05:00Z');
  const end = Date.parse('2026-02-01T00:05:00Z');
  for (let at = start, revision = 1; at <= end; at += 10 * 60_000, revision++) {
    stored.push(periodicName(base, revision, new Date(at)));
    const gone = new Set(expired(stored, base, retention, at));
    stored = stored.filter((n) => !gone.has(n));
  }
  const stamp = (name: string): string => name.split('_').at(-1) ?? '';
  const hourly = Array.from({ length: 24 }, (_, h) => `2026-01-31-${String(h).padStart(2, '0')}:55:00`);
  const daily = Array.from({ length: 30 }, (_, d) => `2026-01-${String(d + 2).padStart(2, '0')}-23:55:00`);
  const expected = [...new Set([...daily, ...hourly, '2026-02-01-00:05:00'])].sort();
  assert.deepEqual(stored.map(stamp).sort(), expected, 'the newest of each of the last 24 hours and of each of the last 30 days, and the newest');
  assert.equal(stored.length, 54);
  const capped = expired(stored, base, { ...retention, maxBackups: 10 }, end);
  assert.equal(stored.length - capped.length, 10, 'maxBackups still caps what the tiers keep');
});

test('retention tiers travel to the Volume backup\'s pod as EVERY:FOR and come back the same; a bad one is refused', () => {
  const tiers = [{ everySeconds: 3600, forSeconds: 86400 }, { everySeconds: 86400, forSeconds: 2592000 }];
  assert.deepEqual(parseTiers(tiersArg(tiers)), tiers);
  assert.deepEqual(parseTiers(''), []);
  assert.throws(() => parseTiers('3600:60'), /FOR ≥ EVERY/);
});
