// suite: extended — what an idle cluster costs (API requests, raft entries): a property of cost, measured here, not of safety.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { settledPods, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { counterSeries } from '../support/process-usage.js';
import { STEADY_LOOK_MS } from '../../src/controllers/cluster/execute.js';
import { METRICS_PORT } from '../../src/k8s/member-pod.js';
import { WHOLE_LOOK_EVERY_MS } from '../../src/controllers/cluster/steady-look.js';

test('an idle cluster costs nothing: no API request but its watches renewing, no raft entry from the operator while it rests, and its leader alone asked between whole looks', async (t) => {
  const bed = await testbed(t, 'idle');
  const operator = startOperator(t, bed.namespace);
  await bed.create('idle', { size: 3 });
  await eventually('3 members settled', 120_000, async () => settledPods(bed.core, await bed.get('idle'), 3));
  // At rest means etcd too: shortly after a bootstrap its leader still writes entries of its own (it publishes
  // the cluster version once it knows every member's), and the operator rightly reports the raft index they
  // move. The window starts once the recorded raft indexes have not moved over two of the operator's periodic
  // looks, so an entry etcd wrote just before the last one would show.
  let seen = '';
  let since = Date.now();
  const twoLooksMs = 2 * STEADY_LOOK_MS + 1000;
  await eventually('the raft index at rest over two looks', 120_000 + twoLooksMs, async () => {
    const now = JSON.stringify(((await bed.get('idle')).status?.memberStatus ?? []).map((m) => m.raftIndex ?? 0));
    if (now !== seen) [seen, since] = [now, Date.now()];
    return Date.now() - since >= twoLooksMs || undefined;
  });
  const requests = async (): Promise<Map<string, number>> => counterSeries(await (await fetch(await operator.metricsUrl())).text(), 'rest_client_requests_total');
  // What the operator asked etcd: each member's own count of the calls it answered (the JSON gateway's included).
  const etcdCalls = async (): Promise<{ memberLists: number; statuses: number[] }> => {
    const counts = await Promise.all((await bed.pods('idle')).map(async (p) => {
      const text = await (await fetch(`http://${p.status?.podIP ?? ''}:${METRICS_PORT}/metrics`)).text();
      const handled = (method: string): number => [...counterSeries(text, 'grpc_server_handled_total')].filter(([series]) => series.includes(`grpc_method="${method}"`)).reduce((sum, [, n]) => sum + n, 0);
      return { memberList: handled('MemberList'), status: handled('Status') };
    }));
    return { memberLists: counts.reduce((sum, c) => sum + c.memberList, 0), statuses: counts.map((c) => c.status) };
  };
  const [before, statusBefore, etcdBefore] = [await requests(), (await bed.get('idle')).status, await etcdCalls()];
  // Longer than two of the operator's periodic looks at a healthy cluster.
  await new Promise((r) => setTimeout(r, twoLooksMs + 4000));
  const [after, statusAfter, etcdAfter] = [await requests(), (await bed.get('idle')).status, await etcdCalls()];
  // Which requests, and what the status became, so that a failure says what the operator did.
  const made = [...after].filter(([series, n]) => n !== (before.get(series) ?? 0)).map(([series, n]) => [series, n - (before.get(series) ?? 0)] as const);
  // The only traffic is the watches renewing themselves: each times out on the server after 15 to 30 s (so that
  // a silent one is noticed within seconds), so each of the 8 watches opens at most one per 15 s of the window.
  const windowS = (twoLooksMs + 4000) / 1000;
  const renewals = made.filter(([series]) => series.includes('method="WATCH"')).reduce((sum, [, n]) => sum + n, 0);
  const others = made.filter(([series]) => !series.includes('method="WATCH"')).map(([series, n]) => `${series} +${n}`);
  t.diagnostic(`watch renewals in ${windowS} s: ${renewals}`);
  assert.deepEqual(others, [], `no API request but watch renewals; status before ${JSON.stringify(statusBefore)}, after ${JSON.stringify(statusAfter)}`);
  assert.ok(renewals <= 8 * Math.ceil(windowS / 15), `watch renewals in ${windowS} s: ${renewals}`);
  const raftIndexes = (s: typeof statusBefore): number[] => (s?.memberStatus ?? []).map((m) => m.raftIndex ?? 0);
  assert.deepEqual(raftIndexes(statusAfter), raftIndexes(statusBefore), 'no raft entry: the operator wrote nothing to etcd');
  // Between whole looks (one in WHOLE_LOOK_EVERY_MS at most, longer than this window) only the leader is asked for
  // its status: no member list, and the followers asked at most once, by a whole look.
  const memberLists = etcdAfter.memberLists - etcdBefore.memberLists;
  const statusCalls = etcdAfter.statuses.map((n, i) => n - (etcdBefore.statuses[i] ?? 0)).sort((a, b) => b - a);
  t.diagnostic(`in ${windowS} s, etcd answered ${memberLists} member lists and status calls ${JSON.stringify(statusCalls)} (members, most first)`);
  assert.ok(windowS * 1000 < WHOLE_LOOK_EVERY_MS);
  assert.ok(memberLists <= 1, `member lists: ${memberLists}`);
  assert.ok((statusCalls[0] ?? 0) >= 2, `the leader answered a light look at each of the ${windowS} s window's looks: ${JSON.stringify(statusCalls)}`);
  assert.ok(statusCalls.slice(1).every((n) => n <= 1), `followers asked only by a whole look: ${JSON.stringify(statusCalls)}`);
  operator.succeeded();
});
