import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { checkedLoad, untilServing } from '../support/write-load.js';
import { chaosSettings, memberNames, seededRandom, watchMembership } from '../support/chaos.js';
import { checkLoad } from '../support/load-check.js';

const { seeds, durationMs } = chaosSettings();

for (const size of [3, 5]) {
  for (const seed of seeds) {
    test(`chaos: random member pods killed one at a time for ${durationMs / 1000} s, ${size} members, seed ${seed}: nothing acknowledged is lost`, async (t) => {
      const random = seededRandom(seed * 100 + size);
      const bed = await testbed(t, `kills${size}`);
      const operator = startOperator(t, bed.namespace);
      await bed.create('kills', { size });
      const settled = (): Promise<string[] | undefined> => bed.settledMembers('kills', size);
      await eventually(`${size} members settled`, 120_000, settled);
      const endpoint = await bed.clientEndpoint('kills');
      await untilServing(endpoint);
      const membership = watchMembership(t, bed, 'kills');
      const load = checkedLoad(bed, endpoint, 'load');
      const deadline = Date.now() + durationMs;
      let kills = 0;
      let slowestRecoveryMs = 0;
      while (Date.now() < deadline) {
        const pods = await eventually('settled before the next kill', 180_000, settled);
        await new Promise((r) => setTimeout(r, random.int(1000, 5000)));
        const victim = random.pick(pods);
        const killedAt = Date.now();
        await bed.core.deleteNamespacedPod({ name: victim, namespace: bed.namespace, gracePeriodSeconds: 0 });
        kills += 1;
        await eventually(`recovered from kill ${kills}`, 180_000, async () => {
          const now = await settled();
          return now && !now.includes(victim) ? now : undefined;
        });
        slowestRecoveryMs = Math.max(slowestRecoveryMs, Date.now() - killedAt);
      }
      const report = await load.finish();
      const m = membership.stop();
      t.diagnostic(`seed ${seed}: ${kills} kills survived, slowest recovery ${slowestRecoveryMs} ms; membership ${m.fewest}–${m.most} members, at most ${m.mostLearners} learner(s), over ${m.samples} samples`);
      checkLoad(t, `kills on ${size} members`, report);
      assert.ok(kills >= 2, 'the scenario killed members');
      assert.ok(m.most <= size + 1 && m.fewest >= size - 1, `membership strayed by one at most (${m.fewest}–${m.most})`);
      assert.ok(m.mostLearners <= 1, 'one learner at a time');
      assert.deepEqual(await memberNames(bed, 'kills'), (await settled())?.sort(), 'no orphan member or pod');
      operator.succeeded();
    });
  }
}
