import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import type { TestOperator } from '../support/operator-process.js';
import { checkedLoad, untilServing } from '../support/write-load.js';
import { chaosSettings, memberNames, seededRandom } from '../support/chaos.js';
import { checkLoad } from '../support/load-check.js';

const { seeds, full } = chaosSettings();
const leading = (o: TestOperator): boolean => o.logs.some((l) => l.includes('"msg":"leading"'));

for (const seed of seeds) {
  test(`chaos: two operator replicas with leader election, the leader SIGKILLed ${full ? 5 : 2} times while members fail, seed ${seed}`, async (t) => {
    const random = seededRandom(seed);
    const bed = await testbed(t, 'leaders');
    const replica = (): TestOperator => startOperator(t, bed.namespace, ['--leader-elect']);
    let replicas = [replica(), replica()];
    await bed.create('leaders', { size: 3 });
    const settled = (): Promise<string[] | undefined> => bed.settledMembers('leaders', 3);
    await eventually('3 members settled', 120_000, settled);
    const endpoint = await bed.clientEndpoint('leaders');
    await untilServing(endpoint);
    const load = checkedLoad(bed, endpoint, 'load');
    for (let round = 1; round <= (full ? 5 : 2); round++) {
      const leader = await eventually('one replica leading', 60_000, async () => Promise.resolve(replicas.filter(leading).length === 1 ? replicas.find(leading) : undefined));
      await leader.kill();
      leader.succeeded();
      replicas = [...replicas.filter((r) => r !== leader), replica()];
      // Work only a new leader can do: a member lost while nobody leads.
      const victim = random.pick(await settled() ?? []);
      const killedAt = Date.now();
      await bed.core.deleteNamespacedPod({ name: victim, namespace: bed.namespace, gracePeriodSeconds: 0 });
      const healed = await eventually(`round ${round}: healed under a new leader`, 180_000, async () => {
        const now = await settled();
        return now && !now.includes(victim) ? now : undefined;
      });
      assert.equal(replicas.filter(leading).length, 1, 'exactly one live replica leads');
      assert.deepEqual(await memberNames(bed, 'leaders'), healed, 'no orphan member or pod');
      t.diagnostic(`seed ${seed}, round ${round}: the member lost with the leader was replaced ${Date.now() - killedAt} ms later`);
    }
    checkLoad(t, 'leader kills', await load.finish());
    for (const r of replicas) r.succeeded();
  });
}
