import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { deleteRuns, revisionGuard, sendsAfter } from '../../src/controllers/restore/revision-ops.js';
import type { LoggedRevision } from '../../src/controllers/restore/revision-ops.js';
import type { TxnCompare, TxnOp } from '../../src/etcd/client.js';
import type { ChangeEvent } from '../../src/etcd/watch-grpc.js';

const buf = (s: string): Buffer => Buffer.from(s, 'utf8');

/** What a store holding `present` holds after the ops' deletes, as etcd applies a ranged delete [key, rangeEnd). */
function afterDeletes(present: readonly Buffer[], ops: readonly TxnOp[]): string[] {
  return present.filter((k) => !ops.some((o) => o.type === 'delete' && (o.rangeEnd
    ? Buffer.compare(k, o.key) >= 0 && Buffer.compare(k, o.rangeEnd) < 0
    : k.equals(o.key)))).map((k) => k.toString('hex')).sort();
}

test('a prefix delete of 200 keys is one ranged delete of exactly those keys', () => {
  const ns = Array.from({ length: 200 }, (_, i) => buf(`/registry/configmaps/ns-a/cm-${String(i).padStart(3, '0')}`));
  const others = [buf('/registry/configmaps/ns-'), buf('/registry/configmaps/ns-a0'), buf('/registry/configmaps/ns-b/x')];
  const grouped = deleteRuns(ns, [...others, ...ns]);
  assert.ok('runs' in grouped);
  assert.equal(grouped.runs.length, 1);
  assert.deepEqual(afterDeletes([...others, ...ns], grouped.runs), others.map((k) => k.toString('hex')).sort());
});

test('keys of a lease spread among other keys: one run per stretch between keys that stay', () => {
  const present = ['a', 'b', 'c', 'd', 'e', 'f'].map(buf);
  const grouped = deleteRuns(['b', 'c', 'e'].map(buf), present);
  assert.ok('runs' in grouped);
  assert.deepEqual(grouped.runs.map((o) => [o.key.toString(), o.type === 'delete' ? o.rangeEnd?.toString('hex') : 'put']), [['b', '6300'], ['e', undefined]]);
});

test('a key the same transaction creates between deleted keys ends the run (a range over it would be refused as a duplicate)', () => {
  const a = Array.from({ length: 100 }, (_, i) => buf(`/x/a/${String(i).padStart(3, '0')}`));
  const c = Array.from({ length: 100 }, (_, i) => buf(`/x/c/${String(i).padStart(3, '0')}`));
  const grouped = deleteRuns([...a, ...c], [...a, ...c], [buf('/x/b-new')]);
  assert.ok('runs' in grouped);
  assert.equal(grouped.runs.length, 2);
  assert.ok(grouped.runs.every((o) => o.type === 'delete' && !(Buffer.compare(buf('/x/b-new'), o.key) >= 0 && o.rangeEnd && Buffer.compare(buf('/x/b-new'), o.rangeEnd) < 0)), 'no range covers the new key');
});

test('a deleted key the store does not hold is answered, not grouped over', () => {
  const grouped = deleteRuns(['a', 'x'].map(buf), ['a', 'b'].map(buf));
  assert.ok('missing' in grouped);
  assert.equal(grouped.missing.toString(), 'x');
});

test('property: the runs delete exactly the deleted keys, never one that stays or is written, in no more operations than keys', () => {
  const key = fc.uint8Array({ minLength: 1, maxLength: 4 }).map((a) => Buffer.from(a));
  const keys = fc.uniqueArray(key, { minLength: 1, maxLength: 60, selector: (k) => k.toString('hex') });
  fc.assert(fc.property(keys, keys, fc.infiniteStream(fc.boolean()), (present, fresh, picks) => {
    const it = picks[Symbol.iterator]();
    const deleted = present.filter(() => it.next().value === true);
    fc.pre(deleted.length > 0);
    // Keys the transaction also writes: some it creates (not held), some it overwrites (held, not deleted).
    const gone = new Set(deleted.map((k) => k.toString('hex')));
    const written = [...fresh, ...present].filter((k) => !gone.has(k.toString('hex')) && it.next().value === true);
    const grouped = deleteRuns(deleted, present, written);
    assert.ok('runs' in grouped);
    const all = [...present, ...written.filter((w) => !present.some((p) => p.equals(w)))];
    assert.deepEqual(afterDeletes(all, grouped.runs), all.map((k) => k.toString('hex')).filter((k) => !gone.has(k)).sort(), 'exactly the deleted keys go; every key written stays out of every range');
    assert.ok(grouped.runs.length <= deleted.length);
  }), { numRuns: 500 });
});

/** A store as a transaction's comparisons see it: each key's modification revision and version. */
type Store = Map<string, { mod: number; version: number }>;

/** etcd's compare on a key: an absent key compares with a zero modification revision and version. */
function holds(store: Store, c: TxnCompare): boolean {
  const kv = store.get(c.key.toString('hex')) ?? { mod: 0, version: 0 };
  const have = c.target === 'MOD' ? kv.mod : kv.version;
  return c.result === 'EQUAL' ? have === c.value : c.result === 'LESS' ? have < c.value : have > c.value;
}

/**
 * A source history over a few keys: each revision puts or deletes some of them (a delete only of a key that is
 * there), as a client's transactions, prefix deletes and lease expiries make them; with every store state after it.
 */
const history = fc.array(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.boolean()), { minLength: 1, maxLength: 3 }), { minLength: 2, maxLength: 30 })
  .map((steps) => {
    const states: Store[] = [new Map([['6b30', { mod: 1, version: 1 }]])];
    const revisions: LoggedRevision[] = [];
    for (const step of steps) {
      const store: Store = new Map(states[states.length - 1]);
      const revision = revisions.length + 2;
      const events: ChangeEvent[] = [];
      for (const [k, put] of step) {
        const key = Buffer.from(`k${k}`);
        const hex = key.toString('hex');
        if (events.some((e) => e.key.equals(key))) continue;
        const kv = store.get(hex);
        if (!put && !kv) continue;
        events.push({ type: put ? 'put' : 'delete', key, value: Buffer.from('v'), revision, createRevision: 0, version: 0, lease: 0 });
        if (put) store.set(hex, { mod: revision, version: (kv?.version ?? 0) + 1 });
        else store.delete(hex);
      }
      if (events.length === 0) continue;
      revisions.push({ revision, events });
      states.push(store);
    }
    return { revisions, states };
  });

test('property: a replayed revision\'s guard holds only on the store as the revision before it left it: never earlier in its pass (sent ahead of one before it that puts a key), never on the store it leaves (sent twice in a row)', () => {
  fc.assert(fc.property(history, fc.integer({ min: 0, max: 1_000 }), ({ revisions, states }, bump) => {
    fc.pre(revisions.length >= 2);
    const shift = { held: 1, bump };
    // The store's states in the restored numbering: a bump raises every revision after the snapshot's.
    const bumped = states.map((s) => new Map([...s].map(([k, v]) => [k, { ...v, mod: v.mod > 1 ? v.mod + bump : v.mod }])));
    // The earliest state a revision can meet: the replay waits for a revision that only deletes before the next.
    let earliest = 0;
    for (const [i, logged] of revisions.entries()) {
      const previous = revisions[i - 1];
      if (previous && !sendsAfter(previous)) earliest = i;
      const guard = revisionGuard(shift, logged.revision, logged.events, previous);
      const passes = (store: Store = new Map()): boolean => guard.every((c) => holds(store, c));
      assert.ok(passes(bumped[i]), `revision ${logged.revision} applies after the one before it`);
      for (let j = earliest; j < i; j++) assert.ok(!passes(bumped[j]), `revision ${logged.revision} refused on the store at ${j + 1}`);
      assert.ok(!passes(bumped[i + 1]), `revision ${logged.revision} refused on the store it leaves`);
    }
  }), { numRuns: 1000 });
});

test('a revision after one that only deletes is not sent ahead of it: a deleted key is absent before it was made too', () => {
  const key = Buffer.from('k');
  const e = (type: 'put' | 'delete', revision: number): ChangeEvent => ({ type, key, value: Buffer.from('v'), revision, createRevision: 0, version: 0, lease: 0 });
  assert.equal(sendsAfter({ revision: 3, events: [e('delete', 3)] }), false);
  assert.equal(sendsAfter({ revision: 3, events: [e('delete', 3), { ...e('put', 3), key: Buffer.from('j') }] }), true);
  // Made at 2, deleted at 3: a guard on 3's delete alone would hold on the store at 1 as well as at 3.
  const guard = revisionGuard({ held: 1, bump: 0 }, 4, [e('put', 4)], { revision: 3, events: [e('delete', 3)] });
  assert.deepEqual(guard.map((c) => [c.target, c.result, c.value]), [['MOD', 'LESS', 4], ['VERSION', 'EQUAL', 0]]);
});
