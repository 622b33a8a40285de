import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { checkedLoad, loadedCluster } from '../support/write-load.js';
import { chaosSettings, memberNames, seededRandom, watchMembership } from '../support/chaos.js';
import { checkLoad } from '../support/load-check.js';
import { isolateFromPeers } from '../support/partition.js';

const { seeds, full } = chaosSettings();
// Below the operator's 60 s replacement threshold in the short form: the member must rejoin by itself.
const isolatedMs = full ? 45_000 : 15_000;

for (const seed of seeds) {
  test(`chaos: ${seed % 2 === 1 ? 'the leader' : 'a follower'} cut off from its peers for ${isolatedMs / 1000} s, then healed, seed ${seed}: the rest serves, it rejoins, nothing is lost`, async (t) => {
    const random = seededRandom(seed);
    const bed = await testbed(t, 'partition');
    const operator = startOperator(t, bed.namespace);
    const settled = (): Promise<string[] | undefined> => bed.settledMembers('split', 3);
    const { endpoint, load, leader } = await loadedCluster(bed, 'split', { size: 3 }, 120_000, { recorded: true });
    const membership = watchMembership(t, bed, 'split');
    // Odd seeds cut off the leader, even seeds a follower: the short form covers the harder case, and
    // the long form both.
    const pods = await bed.pods('split');
    const wasLeader = seed % 2 === 1;
    const victim = wasLeader ? pods.find((p) => p.metadata?.name === leader) : random.pick(pods.filter((p) => p.metadata?.name !== leader));
    assert.ok(victim, `the ${wasLeader ? 'leader' : 'follower'} to cut off`);
    const heal = isolateFromPeers(victim.status?.podIP ?? '');
    t.after(heal);
    await eventually('the isolated member seen unready', 60_000, async () => {
      const c = await bed.get('split');
      return c.status?.members?.unready?.includes(victim.metadata?.name ?? '') ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, isolatedMs));
    const during = await load.finish();
    heal();
    const after = checkedLoad(bed, endpoint, 'after', 'after-');
    const back = await eventually('healed: 3 members settled', 180_000, settled);
    checkLoad(t, `isolation of ${wasLeader ? 'the leader' : 'a follower'}`, during);
    await new Promise((r) => setTimeout(r, 3000));
    checkLoad(t, 'after healing', await after.finish());
    const m = membership.stop();
    t.diagnostic(`seed ${seed}: ${victim.metadata?.name ?? ''} (${wasLeader ? 'leader' : 'follower'}) isolated; membership ${m.fewest}–${m.most}`);
    assert.ok(back.includes(victim.metadata?.name ?? ''), 'the isolated member rejoined, not replaced');
    assert.deepEqual(await memberNames(bed, 'split'), back, 'no orphan member or pod');
    assert.ok(m.most <= 3 && m.fewest >= 3, 'membership untouched');
    operator.succeeded();
  });
}
