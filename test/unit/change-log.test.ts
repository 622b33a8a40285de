import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  byRevision, chunkName, chunksOf, coveredRuns, decodeChunk, encodeChunk, holes, pointInTimePlan, prunableChunks, revisionAt,
} from '../../src/storage/change-log.js';
import type { ChunkBody, ChunkName, ClockReading, LoggedRevision } from '../../src/storage/change-log.js';
import { decodeEvent, watchCreateRequest, watchMessage } from '../../src/etcd/watch-grpc.js';
import { encodeField, lastFields } from '../../src/etcd/protobuf.js';
import { changeLogStatus } from '../../src/controllers/backup/change-logs.js';
import { ReplayError, readChunk } from '../../src/controllers/restore/replay.js';
import { DirectoryStorage } from '../../src/storage/directory.js';
import { datedPeriodicBackups, heldRevisions } from '../../src/storage/naming.js';
import { seal, sealingKey } from '../../src/storage/sealed.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';

const kv = (key: string, value: string, mod: number, create = mod, version = 1, lease = 0): Buffer => Buffer.concat([
  encodeField(1, Buffer.from(key)), encodeField(2, create), encodeField(3, mod), encodeField(4, version), encodeField(5, Buffer.from(value)), encodeField(6, lease),
]);
const event = (type: 0 | 1, body: Buffer): Buffer => Buffer.concat([encodeField(1, type), encodeField(2, body)]);
const header = (revision: number): Buffer => encodeField(1, Buffer.concat([encodeField(1, 77), encodeField(3, revision)]));

test('watch responses: events keep etcd\'s bytes with their revision; progress, compaction and cancel are told apart; creation is skipped', () => {
  const put = event(0, kv('a', 'one', 7, 5, 3, 9));
  const del = event(1, kv('b', '', 7));
  const events = watchMessage(Buffer.concat([header(7), encodeField(2, 1), encodeField(11, put), encodeField(11, del)]));
  assert.deepEqual(events, { kind: 'events', events: [{ revision: 7, raw: put }, { revision: 7, raw: del }] });
  assert.deepEqual(watchMessage(header(42)), { kind: 'progress', revision: 42 });
  assert.deepEqual(watchMessage(Buffer.concat([header(50), encodeField(4, true), encodeField(5, 30)])), { kind: 'compacted', compactRevision: 30 });
  assert.deepEqual(watchMessage(Buffer.concat([header(50), encodeField(4, true), encodeField(6, Buffer.from('no leader'))])), { kind: 'canceled', reason: 'no leader' });
  assert.equal(watchMessage(Buffer.concat([header(50), encodeField(3, true)])), undefined);
  assert.deepEqual(decodeEvent(put), { type: 'put', key: Buffer.from('a'), value: Buffer.from('one'), revision: 7, createRevision: 5, version: 3, lease: 9 });
  assert.equal(decodeEvent(del).type, 'delete');
});

test('a watch is created over every key from the revision asked, in fragments', () => {
  const create = lastFields(watchCreateRequest(1234)).get(1);
  assert.ok(Buffer.isBuffer(create));
  const f = lastFields(create);
  assert.deepEqual([f.get(1), f.get(2), f.get(3), f.get(8)], [Buffer.from([0]), Buffer.from([0]), 1234, 1]);
});

test('chunks: revisions round-trip with their events and times; a cut-off body is an error, not a shorter log', () => {
  const revisions = byRevision([
    { revision: 10, raw: Buffer.from('e1') }, { revision: 10, raw: Buffer.from('e2') }, { revision: 11, raw: Buffer.alloc(300, 1) },
  ], 1_700_000_000_123);
  assert.deepEqual(revisions.map((r) => [r.revision, r.events.length]), [[10, 2], [11, 1]]);
  const clock = [{ startMs: 1_700_000_000_000, doneMs: 1_700_000_000_004, revision: 11 }];
  const body = encodeChunk(revisions, clock);
  assert.deepEqual(decodeChunk(body), { revisions, clock });
  assert.deepEqual(decodeChunk(encodeChunk(revisions)), { revisions, clock: [] }, 'a chunk without readings, as earlier versions wrote them');
  assert.throws(() => decodeChunk(body.subarray(0, body.length - 5)), /cut off/);
});

test('chunk names list in revision order and parse back; other objects are ignored', () => {
  const names = [chunkName('b/x.db', 101, 250, 5000), chunkName('b/x.db', 9, 100, 4000), 'b/x.db_v5_2026-01-01-00:00:00', 'b/x.db.changes/junk'];
  assert.deepEqual([...names].sort().filter((n) => n.includes('.changes/0')), [names[1], names[0]], 'lexical order is revision order');
  assert.deepEqual(chunksOf(names, 'b/x.db').map((c) => [c.from, c.to, c.confirmedAtMs]), [[9, 100, 4000], [101, 250, 5000]]);
});

const chunk = (from: number, to: number, confirmedAtMs = to * 10): ChunkName => ({ name: chunkName('x', from, to, confirmedAtMs), from, to, confirmedAtMs });

test('holes and runs: what the log holds and misses between two revisions', () => {
  const chunks = [chunk(1, 10), chunk(11, 20), chunk(31, 40)];
  assert.deepEqual(holes(chunks, 5, 20), []);
  assert.deepEqual(holes(chunks, 5, 35), [{ from: 21, to: 30 }]);
  assert.deepEqual(holes(chunks, 5, 45), [{ from: 21, to: 30 }, { from: 41, to: 45 }]);
  assert.deepEqual(coveredRuns(chunks), [{ from: 1, to: 20 }, { from: 31, to: 40 }]);
  assert.deepEqual(prunableChunks(chunks, 20).map((c) => c.to), [10, 20]);
});

test('a point in time starts from the newest snapshot at or before it whose log reaches it', () => {
  const snapshots = [{ name: 's5', revision: 5 }, { name: 's25', revision: 25 }, { name: 's35', revision: 35 }];
  const chunks = [chunk(6, 10), chunk(11, 20), chunk(36, 50)];
  const plan = pointInTimePlan(snapshots, chunks, 15);
  assert.ok('snapshot' in plan);
  assert.deepEqual([plan.snapshot.name, plan.chunks.map((c) => c.from)], ['s5', [6, 11]]);
  const later = pointInTimePlan(snapshots, chunks, 40);
  assert.ok('snapshot' in later && later.snapshot.name === 's35');
  assert.deepEqual(pointInTimePlan(snapshots, chunks, 30), { refused: 'revision 30 cannot be rebuilt: revisions 26-30 are missing after the nearest snapshot (the change log holds 6-20, 36-50)' });
  assert.match((pointInTimePlan(snapshots, chunks, 3) as { refused: string }).refused, /before the oldest full snapshot \(revision 5\)/);
});

test('property: a plan always covers every revision from its snapshot to the target; a refusal means no snapshot could', () => {
  const stretch = fc.tuple(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 0, max: 30 })).map(([from, n]) => chunk(from, from + n));
  fc.assert(fc.property(
    fc.array(fc.integer({ min: 0, max: 230 }), { maxLength: 6 }), fc.array(stretch, { maxLength: 12 }), fc.integer({ min: 1, max: 240 }),
    (revs, raw, target) => {
      const snapshots = revs.map((r) => ({ name: `s${r}`, revision: r }));
      const chunks = chunksOf(raw.map((c) => c.name), 'x');
      const plan = pointInTimePlan(snapshots, chunks, target);
      const coverable = snapshots.filter((s) => s.revision <= target && holes(chunks, s.revision + 1, target).length === 0);
      if ('refused' in plan) return coverable.length === 0;
      return plan.snapshot.revision <= target && holes(plan.chunks, plan.snapshot.revision + 1, target).length === 0
        && coverable.every((s) => s.revision <= plan.snapshot.revision);
    },
  ));
});

test('without clock readings (a log from an earlier version) a time is refused: when an event was read is no clock', async () => {
  const records: Record<string, LoggedRevision[]> = {
    [chunk(1, 3, 1000).name]: [{ revision: 1, atMs: 100, events: [] }, { revision: 2, atMs: 500, events: [] }, { revision: 3, atMs: 900, events: [] }],
    [chunk(4, 5, 2000).name]: [{ revision: 4, atMs: 1500, events: [] }, { revision: 5, atMs: 1900, events: [] }],
  };
  const chunks = [chunk(1, 3, 1000), chunk(4, 5, 2000)];
  const read = (c: ChunkName): Promise<ChunkBody> => Promise.resolve({ revisions: records[c.name] ?? [], clock: [] });
  for (const at of [600, 1950, 99_999]) {
    const pinned = await revisionAt(chunks, at, read);
    assert.ok('refused' in pinned && /no reading of the cluster's revision near/.test(pinned.refused), JSON.stringify(pinned));
  }
});

test('a time maps to the revision etcd had certainly committed by then, by the clock readings; one the readings cannot pin within the bound is refused', async () => {
  const rev = (revision: number, atMs: number): LoggedRevision => ({ revision, atMs, events: [] });
  const reading = (startMs: number, revision: number): ClockReading => ({ startMs, doneMs: startMs + 5, revision });
  // 0-10 s: normal, a reading each second; 10-70 s: the store hangs, revisions 21-80 are received only at 70 s when
  // it answers, but the readings go on every 2 s; 70-120 s: the operator is stopped while 81-130 are written; then on.
  const bodies: Record<string, ChunkBody> = {};
  const chunks: ChunkName[] = [];
  const add = (from: number, to: number, confirmedAtMs: number, body: ChunkBody): void => {
    const c = chunk(from, to, confirmedAtMs);
    chunks.push(c);
    bodies[c.name] = body;
  };
  add(1, 20, 10_000, { revisions: Array.from({ length: 20 }, (_, i) => rev(i + 1, 500 * (i + 1))), clock: Array.from({ length: 10 }, (_, i) => reading(1000 * (i + 1), 2 * (i + 1))) });
  // The first chunk stored once the store answers is named for the progress asked when it stalled (12 s) and holds
  // every reading taken while it was down; the queued answers after it are stored at once, named for their asks.
  add(21, 22, 12_000, { revisions: [rev(21, 70_000), rev(22, 70_000)], clock: Array.from({ length: 30 }, (_, i) => reading(12_000 + 2000 * i, 21 + 2 * i)) });
  for (let from = 23; from <= 79; from += 2) add(from, from + 1, 14_000 + (from - 23) * 1000, { revisions: [rev(from, 70_000), rev(from + 1, 70_000)], clock: [] });
  add(81, 140, 121_000, { revisions: Array.from({ length: 60 }, (_, i) => rev(81 + i, 120_500)), clock: [reading(121_000, 140)] });
  add(141, 141, 122_000, { revisions: [rev(141, 121_500)], clock: [reading(122_000, 141)] });
  const read = (c: ChunkName): Promise<ChunkBody> => Promise.resolve(bodies[c.name] ?? { revisions: [], clock: [] });
  assert.deepEqual(await revisionAt(chunks, 5_200, read), { revision: 10 }, 'normal: the revision received by then');
  assert.deepEqual(await revisionAt(chunks, 30_100, read), { revision: 39 }, 'during the store outage: the reading just before (stored in a chunk named earlier), not the revision received before the outage');
  const down = await revisionAt(chunks, 100_000, read);
  assert.ok('refused' in down && /cannot be pinned.*revisions 81-140 were written between/.test(down.refused), JSON.stringify(down));
  assert.deepEqual(await revisionAt(chunks, 121_700, read), { revision: 141 });
  // A reading that began before a time and ended after it vouches for nothing at that time.
  const straddling = [chunk(1, 5, 1000)];
  const straddled = await revisionAt(straddling, 50_000, () => Promise.resolve({ revisions: [rev(5, 900)], clock: [reading(1000, 5), { startMs: 30_000, doneMs: 60_000, revision: 9 }] }));
  assert.ok('refused' in straddled && /confirmed up to/.test(straddled.refused), JSON.stringify(straddled));
  const later = await revisionAt(chunks, 200_000, read);
  assert.ok('refused' in later && /confirmed up to/.test(later.refused), JSON.stringify(later));
});

test('change log status: following, behind, a gap kept across restarts, waiting for the first snapshot', () => {
  const base = { gaps: [] };
  const following = changeLogStatus({ ...base, fromRevision: 5, throughRevision: 80, confirmedAtMs: 10_000 }, undefined, 12_500, 5);
  assert.deepEqual(following.changeLog, { fromRevision: 5, throughRevision: 80, confirmedAt: '1970-01-01T00:00:10Z', rpoSeconds: 3 });
  assert.deepEqual([following.condition.status, following.condition.reason], ['True', 'Following']);
  const behind = changeLogStatus({ ...base, throughRevision: 80, confirmedAtMs: 10_000, error: 'no member to watch' }, undefined, 40_000, 5);
  assert.deepEqual([behind.condition.status, behind.condition.reason], ['False', 'Behind']);
  assert.match(behind.condition.message ?? '', /30 s ago: no member to watch/);
  const previous = { gaps: [{ from: 1, to: 2, detectedAt: '1970-01-01T00:00:01Z' }] };
  const gap = changeLogStatus({ ...base, gaps: [{ from: 81, to: 99, detectedAtMs: 20_000 }], needsSnapshotFrom: 100 }, previous, 21_000, 5);
  assert.deepEqual(gap.changeLog.gaps?.map((g) => [g.from, g.to]), [[1, 2], [81, 99]], 'gaps the status held are kept');
  assert.deepEqual([gap.condition.status, gap.condition.reason], ['False', 'Gap']);
  // Resumed from a snapshot at 150: the gap runs to 149, and the status says so once, not as a second gap.
  const grown = changeLogStatus({ ...base, gaps: [{ from: 81, to: 149, detectedAtMs: 20_000 }], fromRevision: 151, throughRevision: 160, confirmedAtMs: 30_000 }, gap.changeLog, 31_000, 5);
  assert.deepEqual(grown.changeLog.gaps?.map((g) => [g.from, g.to]), [[1, 2], [81, 149]]);
  assert.equal(changeLogStatus({ ...base, needsSnapshotFrom: 0 }, undefined, 1, 5).condition.reason, 'WaitingForSnapshot');
});

test('a stored chunk is read through its checksum and key, and one that lacks a revision its name promises is refused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'chunks-'));
  try {
    const storage = new DirectoryStorage(dir);
    const key = sealingKey('k1', randomBytes(32));
    const revisions: LoggedRevision[] = [10, 11, 12].map((revision) => ({ revision, atMs: 1000 + revision, events: [Buffer.from(`e${revision}`)] }));
    const store = async (from: number, to: number, held: LoggedRevision[]): Promise<ChunkName> => {
      const name = chunkName('b.db', from, to, 2000);
      await storage.put(name, seal(Readable.from([encodeChunk(held)]), { codec: 'Brotli', key }));
      return chunksOf([name], 'b.db')[0] ?? chunk(from, to);
    };
    const keys = new Map([['k1', key.key]]);
    assert.deepEqual(await readChunk({ storage, keys }, await store(10, 12, revisions)), { revisions, clock: [] });
    await assert.rejects(readChunk({ storage, keys }, await store(20, 22, revisions.slice(0, 2).map((r) => ({ ...r, revision: r.revision + 10 })))),
      (err: unknown) => err instanceof ReplayError && err.reason === 'ChangeLogIncomplete' && /named for revisions 20-22 but holds 2/.test(err.message));
    await assert.rejects(readChunk({ storage, keys: new Map() }, await store(30, 30, [{ revision: 30, atMs: 1, events: [] }])), /k1/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a point-in-time choice takes each snapshot at the revision it holds where a .held object says so, read only for those named at or before the target', async () => {
  const snapshots = datedPeriodicBackups(['b_v100_2026-11-29-10:00:00', 'b_v200_2026-11-29-10:10:00', 'b_v300_2026-11-29-10:20:00', 'b_v200_2026-11-29-10:10:00.held'], 'b');
  assert.deepEqual(snapshots.map((s) => s.name), ['b_v100_2026-11-29-10:00:00', 'b_v200_2026-11-29-10:10:00', 'b_v300_2026-11-29-10:20:00'], 'a .held object is no snapshot');
  const names = ['b_v200_2026-11-29-10:10:00.held', 'b_v300_2026-11-29-10:20:00.held'];
  const read: string[] = [];
  const storage = { get: async function* get(name: string): AsyncIterable<Buffer> { read.push(name); await Promise.resolve(); yield Buffer.from(name.includes('v200') ? '260\n' : '330\n'); } };
  const held = await heldRevisions(snapshots, names, 250, storage);
  assert.deepEqual(held.map((s) => s.revision), [100, 260, 300]);
  assert.deepEqual(read, ['b_v200_2026-11-29-10:10:00.held'], 'only for a snapshot named at or before the target');
  // The held revision is past the target: the snapshot before it is the one to start from.
  const plan = pointInTimePlan(held, [{ name: 'c', from: 101, to: 400, confirmedAtMs: 0 }], 250);
  assert.ok('snapshot' in plan && plan.snapshot.name === 'b_v100_2026-11-29-10:00:00', JSON.stringify(plan));
  // Read newest first, and no further than a snapshot that holds no more than the target.
  read.length = 0;
  assert.deepEqual((await heldRevisions(snapshots, names, 400, storage)).map((s) => s.revision), [100, 200, 330]);
  assert.deepEqual(read, ['b_v300_2026-11-29-10:20:00.held'], 'v300 holds 330, no more than 400: the older ones are not asked');
  // One that cannot be read (retention removed it meanwhile) leaves the name's revision, as before such objects.
  const gone = { get: async function* get(): AsyncIterable<Buffer> { await Promise.resolve(); yield* []; throw Object.assign(new Error('gone'), { name: 'NoSuchKey' }); } };
  assert.deepEqual((await heldRevisions(snapshots, names, 250, gone)).map((s) => s.revision), [100, 200, 300]);
});
