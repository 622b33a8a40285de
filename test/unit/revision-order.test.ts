import { test } from 'node:test';
import assert from 'node:assert/strict';
import { revisionAnomalies } from '../support/revision-order.js';
import type { Input, Operation } from '../support/history.js';

const op = (client: number, input: Input, call: number, ret: number, revision: number, extra: { value?: string | null; succeeded?: boolean } = {}): Operation =>
  ({ client, input, call, return: ret, outcome: { type: 'ok', revision, ...extra } });

test('revisions that grow with real time, writes one above what came before, concurrent ones in any order: no anomaly', () => {
  assert.deepEqual(revisionAnomalies([
    op(0, { f: 'put', key: 'a', value: '1' }, 0, 10, 5),
    op(1, { f: 'get', key: 'b' }, 20, 30, 5, { value: null }),
    op(2, { f: 'put', key: 'b', value: '2' }, 25, 40, 7),
    op(0, { f: 'put', key: 'a', value: '3' }, 26, 35, 6),
    op(1, { f: 'cas', key: 'a', expect: '9', value: '4' }, 50, 60, 7, { succeeded: false }),
    op(1, { f: 'cas', key: 'a', expect: '3', value: '5' }, 70, 80, 8, { succeeded: true }),
  ]), []);
});

test('a linearizable read served from behind on another key, and a write not above a read before it, are anomalies', () => {
  const found = revisionAnomalies([
    op(0, { f: 'put', key: 'a', value: '1' }, 0, 10, 950),
    op(1, { f: 'get', key: 'b' }, 20, 30, 900, { value: 'old' }),
    op(2, { f: 'get', key: 'c' }, 40, 45, 960, { value: null }),
    op(0, { f: 'put', key: 'd', value: '2' }, 50, 60, 960),
  ]);
  assert.equal(found.length, 2);
  assert.match(found[0] ?? '', /client 1's get of b answered at revision 900, begun after client 0's put of a had returned at revision 950/);
  assert.match(found[1] ?? '', /client 0's put of d answered at revision 960, begun after client 2's get of c had returned at revision 960/);
});

test('serializable reads and unanswered operations are left out', () => {
  assert.deepEqual(revisionAnomalies([
    op(0, { f: 'put', key: 'a', value: '1' }, 0, 10, 950),
    op(1, { f: 'get', key: 'b', serializable: true }, 20, 30, 900, { value: 'old' }),
    { client: 2, input: { f: 'put', key: 'c', value: 'x' }, call: 20, return: null, outcome: { type: 'unknown', error: 'timed out' } },
  ]), []);
});
