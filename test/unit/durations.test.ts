import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Durations } from '../../src/runtime/durations.js';

test('a condition counts from when it was first observed, and from its return after a break', () => {
  const d = new Durations();
  assert.deepEqual(d.observe('c1', ['a'], 1000), new Map([['a', 0]]));
  assert.deepEqual(d.observe('c1', ['a', 'b'], 4000), new Map([['a', 3000], ['b', 0]]));
  assert.deepEqual(d.observe('c1', ['b'], 5000), new Map([['b', 1000]]), 'a no longer holds: forgotten');
  assert.deepEqual(d.observe('c1', ['a', 'b'], 6000), new Map([['a', 0], ['b', 2000]]), 'a back: counted afresh');
  assert.deepEqual(d.observe('c2', ['a'], 6000), new Map([['a', 0]]), 'scopes are apart');
  d.forget('c1');
  assert.deepEqual(d.observe('c1', ['b'], 7000), new Map([['b', 0]]));
});
