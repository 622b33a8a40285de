// Issue 32, finding 3: Available means served. Members that all answer the operator's Status calls but are cut off
// from each other elect no leader and serve no write; the cluster must not read "3 of 3 members healthy" then.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { isolateFromPeers } from '../support/partition.js';
import { memberIds } from '../support/chaos.js';
import { etcdPut } from '../support/etcd-gateway.js';
import { checkedLoad } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';

test('every member cut off from its peers but answering the operator: Available=False (NoLeader), nothing replaced; healed, Available again', async (t) => {
  const bed = await testbed(t, 'no-leader');
  const operator = startOperator(t, bed.namespace);
  await bed.create('cut', { size: 3 });
  await eventually('3 members settled', 180_000, () => bed.settledMembers('cut', 3));
  const ids = await memberIds(bed, 'cut');
  const available = async (): Promise<{ status?: string; reason?: string; message?: string } | undefined> =>
    (await bed.get('cut')).status?.conditions?.find((c) => c.type === 'Available');
  assert.equal((await available())?.status, 'True');
  // Clients throughout: cut off, each member may serve its own data to serializable reads, and nothing else.
  const load = checkedLoad(bed, await bed.clientEndpoint('cut'), 'cut');
  // Long enough, at the paced writer's 10-30 writes a second on a busy machine, for checkLoad's 100 acknowledged.
  await new Promise((r) => setTimeout(r, 10_000));

  const heals = (await bed.pods('cut')).map((p) => isolateFromPeers(p.status?.podIP ?? ''));
  t.after(() => { heals.forEach((h) => { h(); }); });
  const cutAt = Date.now();
  const unavailable = await eventually('Available=False while no leader is elected', 90_000, async () => {
    const a = await available();
    return a?.status === 'False' ? a : undefined;
  });
  t.diagnostic(`${((Date.now() - cutAt) / 1000).toFixed(1)} s after the cut: ${JSON.stringify(unavailable)}`);
  assert.equal(unavailable.reason, 'NoLeader');
  // Held for a while: no member is replaced or removed for answering without a leader.
  await new Promise((r) => setTimeout(r, 30_000));
  assert.equal((await available())?.status, 'False', 'still not Available while cut');

  heals.forEach((h) => { h(); });
  await eventually('Available again once healed', 120_000, async () => ((await available())?.status === 'True') || undefined);
  assert.deepEqual(await memberIds(bed, 'cut'), ids, 'the same members throughout');
  await eventually('a write served', 30_000, async () => etcdPut(await bed.clientEndpoint('cut'), 'after', 'heal'));
  await new Promise((r) => setTimeout(r, 10_000));
  checkLoad(t, 'cut off and healed', await load.finish());
  operator.succeeded();
});
