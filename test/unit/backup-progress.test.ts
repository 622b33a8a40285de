import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProgressTeller } from '../../src/controllers/backup/save.js';

test('a snapshot under way is told at its start and first bytes, then every period in which more came, with all that had come when it stopped', (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 });
  const told: [number, number][] = [];
  const teller = new ProgressTeller((bytes, at) => told.push([bytes, at - 1_000_000]), 5000);
  teller.received(100);
  t.mock.timers.tick(2000);
  teller.received(300);
  t.mock.timers.tick(3000);
  // 5 s: 300 bytes, last received at 2 s. Then the stream stops after 50 more bytes at 6 s.
  t.mock.timers.tick(1000);
  teller.received(350);
  t.mock.timers.tick(60_000);
  teller.stop();
  assert.deepEqual(told, [[0, 0], [100, 0], [300, 2000], [350, 6000]], 'nothing told again while the count stood still');
  teller.received(400);
  t.mock.timers.tick(10_000);
  assert.equal(told.length, 4, 'nothing told once stopped');
});
