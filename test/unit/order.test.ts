import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { byName } from '../../src/runtime/order.js';

test('names are ordered by code unit, as < orders them, not by a locale\'s collation', () => {
  // A locale puts "a" before "B" and ignores case at first; code units put every capital first.
  assert.deepEqual(['b', 'a-1', 'B', 'a-10', 'a-2', 'a'].sort(byName), ['B', 'a', 'a-1', 'a-10', 'a-2', 'b']);
  fc.assert(fc.property(fc.array(fc.string()), (names) => {
    const sorted = [...names].sort(byName);
    assert.ok(sorted.every((n, i) => i === 0 || (sorted[i - 1] ?? '') <= n));
    assert.deepEqual(sorted, [...names].sort());
  }));
});
