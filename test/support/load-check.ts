import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ENOUGH_WRITES } from './write-load.js';
import type { LoadReport } from './write-load.js';
import { describeHistory } from './history-check.js';

/** The verifier's verdict on a write load: nothing acknowledged lost, nothing never written, revisions only grew. */
export function checkLoad(t: TestContext, what: string, r: LoadReport): void {
  t.diagnostic(`${what}: ${r.acknowledged} of ${r.attempted} writes acknowledged, lost ${r.lost.length}, longest write gap ${r.longestGapMs} ms`);
  if (r.history) {
    t.diagnostic(`${what}: ${describeHistory(r.history)}`);
    assert.equal(r.history.anomaly, undefined, `${what}: the recorded clients' history and watches hold`);
  }
  assert.deepEqual(r.lost, [], `${what}: no acknowledged write lost`);
  assert.deepEqual(r.unexpected, [], `${what}: no value that was never written`);
  assert.equal(r.revisionWentBack, false, `${what}: revisions only grow`);
  assert.ok(r.acknowledged >= ENOUGH_WRITES, `${what}: the load kept writing`);
}
