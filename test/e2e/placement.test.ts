// Issue 18, spread by default: with no placement in the spec, members spread over zones, then nodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';

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
