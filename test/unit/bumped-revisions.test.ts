import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UNSHIFTED, keyRevision, restoredShift, sourceRevisionOf, storeRevisionOf } from '../../src/controllers/restore/bumped-revisions.js';
import { EtcdError } from '../../src/etcd/client.js';
import type { EtcdClient } from '../../src/etcd/client.js';

test('without a bump the restored store numbers revisions as the source did', () => {
  for (const r of [1, 5, 1000]) {
    assert.equal(keyRevision(UNSHIFTED, r), r);
    assert.equal(storeRevisionOf(UNSHIFTED, r), r);
    assert.equal(sourceRevisionOf(UNSHIFTED, r), r);
  }
});

test('a bumped store: the snapshot\'s keys keep their revisions, its state is read at the bumped revision, replayed revisions land raised', () => {
  const shift = { held: 100, bump: 1_000_000 };
  assert.equal(keyRevision(shift, 100), 100, 'a key of the snapshot keeps its revision');
  assert.equal(keyRevision(shift, 101), 1_000_101, 'the first replayed revision lands raised');
  assert.equal(storeRevisionOf(shift, 100), 1_000_100, 'the snapshot\'s state is the bumped revision');
  assert.equal(sourceRevisionOf(shift, 1_000_100), 100);
  assert.equal(sourceRevisionOf(shift, 1_000_250), 250);
});

test('property: a revision at or past the snapshot maps to the store and back unchanged, and replayed revisions stay in order past the bump', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: 0, max: 1e6 }), (held, bump, past) => {
    const shift = { held, bump };
    const r = held + past;
    assert.equal(sourceRevisionOf(shift, storeRevisionOf(shift, r)), r);
    if (past > 0) assert.equal(keyRevision(shift, r), storeRevisionOf(shift, r), 'a revision replayed lands where its state is read');
    assert.ok(keyRevision(shift, r + 1) > storeRevisionOf(shift, r), 'the next replayed revision is past the store\'s');
  }), { numRuns: 2000 });
});

/** A store as etcdutl leaves it bumped: at `current`, and nothing below `compacted` readable. */
const store = (current: number, compacted: number): EtcdClient => ({
  currentRevision: () => Promise.resolve(current),
  keyCount: (_e: string, revision: number) => (revision < compacted
    ? Promise.reject(new EtcdError('e', 'etcdserver: mvcc: required revision has been compacted', 400)) : Promise.resolve(1)),
}) as unknown as EtcdClient;

test('the shift is found in the restored store: the lowest readable revision less the bump; a store below the bump was not bumped', async () => {
  const bump = 1_000_000;
  assert.deepEqual(await restoredShift(store(bump + 140, bump + 122), 'e', 100, bump), { held: 122, bump }, 'the snapshot held 122, past its name 100; revisions past it are the store\'s own');
  assert.deepEqual(await restoredShift(store(bump + 100, bump + 100), 'e', 100, bump), { held: 100, bump });
  assert.deepEqual(await restoredShift(store(160, 0), 'e', 100, bump), { held: 100, bump: 0 }, 'made before restores bumped: the source\'s numbers');
  assert.deepEqual(await restoredShift(store(160, 0), 'e', 100, 0), { held: 100, bump: 0 });
});

test('a snapshot of an empty store: the source\'s revisions after it land as far above it as the restored store stands', async () => {
  const bump = 1_000_000;
  // etcdutl raised revision 0, the newest with a key (none), to the bump.
  const empty = await restoredShift(store(bump + 3, bump), 'e', 1, bump);
  assert.deepEqual(empty, { held: 1, bump: bump - 1 });
  assert.equal(keyRevision(empty, 2), bump + 1, 'the source\'s revision 2 is the next the store writes');
  assert.equal(storeRevisionOf(empty, 1), bump, 'the source\'s state at 1 is read where the store stands');
});

test('property: the first revision replayed after the snapshot lands right after where the restored store stands', async () => {
  await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 10, max: 1e9 }), async (named, later, bump) => {
    // The snapshot was taken `later` revisions past its name; only an empty store's revision 1 has no key.
    const taken = named + later;
    const stands = (taken === 1 ? 0 : taken) + bump;
    const shift = await restoredShift(store(stands, stands), 'e', named, bump);
    assert.equal(storeRevisionOf(shift, taken), stands, 'the source\'s state when the snapshot was taken is where the store stands');
    assert.equal(keyRevision(shift, taken + 1), stands + 1, 'the next source revision is the next the store writes');
  }), { numRuns: 300 });
});
