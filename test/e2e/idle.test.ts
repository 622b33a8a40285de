import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { settledPods, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { counterTotal } from '../support/process-usage.js';

test('an idle cluster costs nothing: no API request and no raft entry from the operator while it rests', async (t) => {
  const bed = await testbed(t, 'idle');
  const operator = startOperator(t, bed.namespace);
  await bed.create('idle', { size: 3 });
  await eventually('3 members settled', 120_000, async () => settledPods(bed.core, await bed.get('idle'), 3));
  await new Promise((r) => setTimeout(r, 5000));
  const requests = async (): Promise<number> => counterTotal(await (await fetch(operator.metricsUrl)).text(), 'rest_client_requests_total');
  const raftIndexes = async (): Promise<number[]> => ((await bed.get('idle')).status?.memberStatus ?? []).map((m) => m.raftIndex ?? 0);
  const [before, indexesBefore] = [await requests(), await raftIndexes()];
  // Longer than two of the operator's periodic passes over a healthy cluster.
  await new Promise((r) => setTimeout(r, 25_000));
  assert.equal((await requests()) - before, 0, 'no API request');
  assert.deepEqual(await raftIndexes(), indexesBefore, 'no raft entry: the operator wrote nothing to etcd');
  operator.succeeded();
});
