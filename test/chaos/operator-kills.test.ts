import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterSpec } from '../../src/api/etcd-cluster.js';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import type { TestOperator } from '../support/operator-process.js';
import { checkedLoad, untilServing } from '../support/write-load.js';
import { chaosSettings, memberNames, seededRandom, watchMembership } from '../support/chaos.js';
import { checkLoad } from '../support/load-check.js';

const { seeds } = chaosSettings();

for (const seed of seeds) {
  test(`chaos: the operator SIGKILLed at a random moment of a scale-up, a scale-down, a replacement and an upgrade, seed ${seed}: it converges, one membership change at a time`, async (t) => {
    const random = seededRandom(seed);
    const bed = await testbed(t, 'opkill');
    let operator: TestOperator = startOperator(t, bed.namespace);
    await bed.create('opkill', { size: 3, version: '3.5.17' });
    const settled = (size: number, version: string) => (): Promise<string[] | undefined> => bed.settledMembers('opkill', size, version);
    await eventually('3 members settled', 120_000, settled(3, '3.5.17'));
    const endpoint = await bed.clientEndpoint('opkill');
    await untilServing(endpoint);
    const membership = watchMembership(t, bed, 'opkill');
    const load = checkedLoad(bed, endpoint, 'load');
    const phases: { name: string; size: number; version: string; start(): Promise<void> }[] = [
      { name: 'scale-up 3→5', size: 5, version: '3.5.17', start: () => bed.patchSpec('opkill', { size: 5 } satisfies Partial<ClusterSpec>) },
      { name: 'scale-down 5→3', size: 3, version: '3.5.17', start: () => bed.patchSpec('opkill', { size: 3 }) },
      {
        name: 'replacement', size: 3, version: '3.5.17', start: async () => {
          const victim = random.pick(await bed.pods('opkill')).metadata?.name ?? '';
          await bed.core.deleteNamespacedPod({ name: victim, namespace: bed.namespace, gracePeriodSeconds: 0 });
        },
      },
      { name: 'upgrade 3.5.17→3.5.35', size: 3, version: '3.5.35', start: () => bed.patchSpec('opkill', { version: '3.5.35' }) },
    ];
    for (const phase of phases) {
      await phase.start();
      const killAfter = random.int(200, 4000);
      await new Promise((r) => setTimeout(r, killAfter));
      await operator.kill();
      operator.succeeded();
      await new Promise((r) => setTimeout(r, random.int(0, 2000)));
      operator = startOperator(t, bed.namespace);
      const started = Date.now();
      const pods = await eventually(`${phase.name} converged after the kill`, 300_000, settled(phase.size, phase.version));
      assert.deepEqual(await memberNames(bed, 'opkill'), pods, `${phase.name}: no orphan member or pod`);
      t.diagnostic(`seed ${seed}: ${phase.name}: killed ${killAfter} ms in, converged ${Date.now() - started} ms after the restart`);
    }
    const m = membership.stop();
    checkLoad(t, 'operator kills', await load.finish());
    t.diagnostic(`membership ${m.fewest}–${m.most} members, at most ${m.mostLearners} learner(s) and ${m.mostUnstarted} unstarted member(s) at once, ${m.samples} samples`);
    assert.ok(m.mostLearners <= 1, 'one learner at a time');
    assert.ok(m.mostUnstarted <= 1, 'one member being added at a time');
    assert.ok(m.most <= 6 && m.fewest >= 2, `membership within one change of a target (${m.fewest}–${m.most})`);
    operator.succeeded();
  });
}
