// suite: extended — what an idle cluster costs (API requests, raft entries): a property of cost, measured here, not of safety.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { settledPods, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { counterSeries } from '../support/process-usage.js';

test('an idle cluster costs nothing: no API request but its watches renewing, and no raft entry from the operator while it rests', async (t) => {
  const bed = await testbed(t, 'idle');
  const operator = startOperator(t, bed.namespace);
  await bed.create('idle', { size: 3 });
  await eventually('3 members settled', 120_000, async () => settledPods(bed.core, await bed.get('idle'), 3));
  // At rest means etcd too: shortly after a bootstrap its leader still writes entries of its own (it publishes
  // the cluster version once it knows every member's), and the operator rightly reports the raft index they
  // move. The window starts once the recorded raft indexes have not moved for 20 s: two of the operator's
  // periodic passes, so an entry etcd wrote just before the last one would show.
  let seen = '';
  let since = Date.now();
  await eventually('the raft index at rest for 20 s', 120_000, async () => {
    const now = JSON.stringify(((await bed.get('idle')).status?.memberStatus ?? []).map((m) => m.raftIndex ?? 0));
    if (now !== seen) [seen, since] = [now, Date.now()];
    return Date.now() - since >= 20_000 || undefined;
  });
  const requests = async (): Promise<Map<string, number>> => counterSeries(await (await fetch(await operator.metricsUrl())).text(), 'rest_client_requests_total');
  const [before, statusBefore] = [await requests(), (await bed.get('idle')).status];
  // Longer than two of the operator's periodic passes over a healthy cluster.
  await new Promise((r) => setTimeout(r, 25_000));
  const [after, statusAfter] = [await requests(), (await bed.get('idle')).status];
  // Which requests, and what the status became, so that a failure says what the operator did.
  const made = [...after].filter(([series, n]) => n !== (before.get(series) ?? 0)).map(([series, n]) => [series, n - (before.get(series) ?? 0)] as const);
  // The only traffic is the watches renewing themselves: each times out on the server after 15 to 30 s (so that
  // a silent one is noticed within seconds), so 8 watches open at most 2 each in 25 s.
  const renewals = made.filter(([series]) => series.includes('method="WATCH"')).reduce((sum, [, n]) => sum + n, 0);
  const others = made.filter(([series]) => !series.includes('method="WATCH"')).map(([series, n]) => `${series} +${n}`);
  t.diagnostic(`watch renewals in 25 s: ${renewals}`);
  assert.deepEqual(others, [], `no API request but watch renewals; status before ${JSON.stringify(statusBefore)}, after ${JSON.stringify(statusAfter)}`);
  assert.ok(renewals <= 16, `watch renewals in 25 s: ${renewals}`);
  const raftIndexes = (s: typeof statusBefore): number[] => (s?.memberStatus ?? []).map((m) => m.raftIndex ?? 0);
  assert.deepEqual(raftIndexes(statusAfter), raftIndexes(statusBefore), 'no raft entry: the operator wrote nothing to etcd');
  operator.succeeded();
});
