// Issue 18, spread by default: with no placement in the spec, members spread over zones, then nodes; and (issue 32,
// finding 13) a member no node can take is never added. Neither needs a fault: both run beside other tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { memberNames } from '../support/chaos.js';

/** How many of the cluster's members run in each zone and on each node, counts sorted. */
async function placement(bed: Testbed, name: string): Promise<{ zones: number[]; nodes: number[] }> {
  const count = (keys: string[]): number[] => [...keys.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>()).values()].sort();
  const nodes = (await bed.pods(name)).map((p) => p.spec?.nodeName ?? '');
  const zones = await Promise.all(nodes.map(async (n) => (await bed.core.readNode({ name: n })).metadata?.labels?.['topology.kubernetes.io/zone'] ?? ''));
  return { zones: count(zones), nodes: count(nodes) };
}

test('default placement: 3 members on 3 nodes in 3 zones; 5 members 2-2-1, said to share nodes', async (t) => {
  const bed = await testbed(t, 'spread');
  const operator = startOperator(t, bed.namespace);
  await bed.create('spread', { size: 3 });
  await eventually('3 members', 180_000, () => bed.settledMembers('spread', 3));
  assert.deepEqual(await placement(bed, 'spread'), { zones: [1, 1, 1], nodes: [1, 1, 1] });
  const spread = (await bed.get('spread')).status?.conditions?.find((c) => c.type === 'MembersSpread');
  assert.deepEqual([spread?.status, spread?.reason], ['True', 'OnePerNode']);

  await bed.patchSpec('spread', { size: 5 });
  await eventually('5 members', 240_000, () => bed.settledMembers('spread', 5));
  assert.deepEqual(await placement(bed, 'spread'), { zones: [1, 2, 2], nodes: [1, 2, 2] });
  const shared = await eventually('MembersSpread False', 30_000, async () => {
    const c = (await bed.get('spread')).status?.conditions?.find((x) => x.type === 'MembersSpread');
    return c?.status === 'False' ? c : undefined;
  });
  assert.match(shared.message ?? '', /^members share a node: spread-[0-9a-f]{8}, spread-[0-9a-f]{8} on lab-node-\d; spread-[0-9a-f]{8}, spread-[0-9a-f]{8} on lab-node-\d; losing that node/);
  await eventually('a Warning Event SharedNode', 30_000, async () => (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .find((e) => e.involvedObject.name === 'spread' && e.type === 'Warning' && e.reason === 'SharedNode'));
  operator.succeeded();
});

/**
 * The member replacement threshold of the test below: the learner it refused used to be removed and added again
 * past it. 20 s, not the 10 s it had alone on the lab: beside another test, a member that stalls 10 s on two busy
 * cores would be replaced, and "nothing added or removed" would fail for a reason that is not the one tested.
 */
const REPLACE_AFTER_S = 20;

test('issue 32, finding 13: a fourth member no node can take (antiAffinity on three nodes) is never added: TooFewNodes says so, nothing churns; scaled back, the cluster settles', async (t) => {
  const bed = await testbed(t, 'stucklearner');
  const operator = startOperator(t, bed.namespace, ['--replace-member-after', String(REPLACE_AFTER_S)]);
  const name = 'stuck';
  await bed.create(name, { size: 3, pod: { antiAffinity: true } });
  const members = await eventually('3 members, one a node', 180_000, () => bed.settledMembers(name, 3));
  await bed.patchSpec(name, { size: 4 });
  const blocked = await eventually('the scale-up refused as TooFewNodes', 60_000, async () =>
    (await bed.get(name)).status?.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'TooFewNodes'));
  t.diagnostic(blocked.message ?? '');
  // Twice the threshold after which an earlier version removed the learner it had added, to add another: no
  // learner may be added at all, so one add-and-remove cycle is more than the check needs.
  await new Promise((r) => setTimeout(r, REPLACE_AFTER_S * 2000));
  assert.deepEqual((await memberNames(bed, name)).sort(), members, 'no member added, none removed');
  const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items;
  assert.ok(events.some((e) => e.reason === 'TooFewNodes' && e.type === 'Warning'), 'a Warning Event says why');
  assert.ok(!events.some((e) => e.reason === 'AddMember' || e.reason === 'RemoveMember'), 'nothing added or removed');
  // Asked for 3 again, the cluster settles with its members.
  await bed.patchSpec(name, { size: 3 });
  const back = await eventually('3 members settled', 120_000, async () => {
    const now = await bed.settledMembers(name, 3);
    return now && (await memberNames(bed, name)).length === 3 && (await bed.get(name)).status?.conditions?.some((c) => c.type === 'Degraded' && c.status === 'False') ? now : undefined;
  });
  assert.deepEqual(back, members, 'the members it had');
  operator.succeeded();
});
