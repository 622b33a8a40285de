import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Progress } from '../../src/runtime/progress.js';

test('a distance counts from when it last came closer than ever: one that stays or grows keeps counting, a new low starts afresh', () => {
  const p = new Progress();
  assert.deepEqual(p.observe('c1', new Map([['a', 500]]), 1000), new Map([['a', 0]]));
  assert.deepEqual(p.observe('c1', new Map([['a', 400]]), 2000), new Map([['a', 0]]), 'closer: progress');
  assert.deepEqual(p.observe('c1', new Map([['a', 400]]), 3000), new Map([['a', 1000]]), 'no closer');
  assert.deepEqual(p.observe('c1', new Map([['a', 450]]), 4000), new Map([['a', 2000]]), 'further: no progress either');
  assert.deepEqual(p.observe('c1', new Map([['a', 420]]), 5000), new Map([['a', 3000]]), 'closer than last time, but not than ever');
  assert.deepEqual(p.observe('c1', new Map([['a', 399]]), 6000), new Map([['a', 0]]));
});

test('an unknown distance (infinite) counts as no progress, and the first one known is one', () => {
  const p = new Progress();
  p.observe('c1', new Map([['a', Infinity]]), 1000);
  assert.deepEqual(p.observe('c1', new Map([['a', Infinity]]), 3000), new Map([['a', 2000]]));
  assert.deepEqual(p.observe('c1', new Map([['a', 5000]]), 4000), new Map([['a', 0]]));
  assert.deepEqual(p.observe('c1', new Map([['a', Infinity]]), 5000), new Map([['a', 1000]]));
});

test('a key not given is forgotten, and scopes are apart', () => {
  const p = new Progress();
  p.observe('c1', new Map([['a', 100], ['b', 100]]), 1000);
  assert.deepEqual(p.observe('c1', new Map([['b', 100]]), 2000), new Map([['b', 1000]]), 'a caught up: forgotten');
  assert.deepEqual(p.observe('c1', new Map([['a', 900], ['b', 100]]), 3000), new Map([['a', 0], ['b', 2000]]), 'a behind again: counted afresh');
  assert.deepEqual(p.observe('c2', new Map([['a', 100]]), 3000), new Map([['a', 0]]));
  p.forget('c1');
  assert.deepEqual(p.observe('c1', new Map([['b', 100]]), 4000), new Map([['b', 0]]));
});
