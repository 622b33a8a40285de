import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { deleteRuns } from '../../src/controllers/restore/revision-ops.js';
import type { TxnOp } from '../../src/etcd/client.js';

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
