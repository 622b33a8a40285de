import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarise } from '../../bench/stats.js';

test('summaries give the median of odd and even counts, min and max', () => {
  assert.deepEqual(summarise([30, 10, 20]), { runs: 3, medianMs: 20, minMs: 10, maxMs: 30 });
  assert.deepEqual(summarise([40, 10, 20, 30]), { runs: 4, medianMs: 25, minMs: 10, maxMs: 40 });
  assert.throws(() => summarise([]), /no samples/);
});
