import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { paced } from '../../src/controllers/backup/save.js';

test('a snapshot under way tells how many bytes came every few seconds while they arrive, and nothing while the stream stands still', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const told: number[] = [];
  // Each chunk after so many ms: 2 s, 4 s, then a minute standing still before one more chunk (one report for it,
  // none for the wait), and another right after.
  const chunks: [number, number][] = [[0, 100], [2000, 100], [4000, 100], [60_000, 50], [0, 50]];
  async function* stream(): AsyncIterable<Buffer> {
    for (const [afterMs, size] of chunks) {
      t.mock.timers.tick(afterMs);
      yield await Promise.resolve(Buffer.alloc(size));
    }
  }
  let bytes = 0;
  for await (const chunk of paced(stream(), 3_600_000, pino({ level: 'silent' }), (b) => told.push(b))) bytes += chunk.length;
  assert.equal(bytes, 400);
  assert.deepEqual(told, [100, 300, 350], 'told of the first bytes, at 6 s (300 bytes) and once the stream moved again (350 bytes)');
});
