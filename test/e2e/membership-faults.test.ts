// lab: exclusive — members starved of CPU, a node cut off.
// Issue 15, finding 1: a member that is slow or out of reach for long is never replaced in cascade, on the
// three-node lab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { etcdGet, etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { ON_VOLUMES, describeCluster, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { inject } from '../support/faults.js';
import { loadedCluster } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';
import { chaosSettings, memberIds, memberNames, memberRevisions, watchMembership } from '../support/chaos.js';

// The issue's case is three minutes against the default threshold of 60 s (`npm run test:chaos`). `npm test`
// keeps the ratio in less time: the operator replaces a member after 10 s, and each fault lasts 40 s.
const { full } = chaosSettings();
const REPLACE_AFTER_S = full ? 60 : 10;
const FAULT_MS = full ? 180_000 : 40_000;

test(`finding 1: two of three members CPU-starved for ${FAULT_MS / 1000} s (${REPLACE_AFTER_S} s replacement threshold): slow but answering, no member is removed, no write lost`, async (t) => {
  const bed = await testbed(t, 'starved');
  const operator = startOperator(t, bed.namespace, ['--replace-member-after', String(REPLACE_AFTER_S)]);
  const name = 'starved';
  const { members, load, leader } = await loadedCluster(bed, name, { size: 3 }, 120_000, { recorded: true });
  const membership = watchMembership(t, bed, name);
  const starved = members.filter((m) => m !== leader);
  const feeds = [];
  for (const pod of starved) feeds.push(await inject(t, { kind: 'slow-member', namespace: bed.namespace, pod, cpuMillisPerSecond: 3 }));
  // A client keeps reading from each starved member, one read at a time, so that its share stays spent: with
  // both followers starved the writes slow down, and an idle member's own work can fit in its share. Whether the
  // kubelet then finds them unready depends on the probe's patience (5 s since issue 33, where a 1 s timeout made
  // loaded members flap): it is reported, not required; what must hold is that slow members are not removed.
  const reading = { on: true };
  const podIps = new Map((await bed.pods(name)).map((p) => [p.metadata?.name ?? '', p.status?.podIP ?? '']));
  const readers = starved.map(async (m) => { while (reading.on) await etcdGet(`http://${podIps.get(m) ?? ''}:2379`, 'k', { timeoutMs: 30_000 }).catch(() => undefined); });
  await new Promise((r) => setTimeout(r, FAULT_MS));
  reading.on = false;
  await Promise.all(readers);
  for (const feed of feeds) await feed();
  const back = await eventually('fed again: 3 members settled', 180_000, () => bed.settledMembers(name, 3));
  // Starved, the two hold back every commit (each is needed for a quorum); fed, the cluster writes at speed.
  await new Promise((r) => setTimeout(r, 5000));
  checkLoad(t, 'two members starved, then fed', await load.finish());
  const unready = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .filter((e) => e.reason === 'Unhealthy' && /Readiness probe failed/.test(e.message ?? '')).map((e) => e.involvedObject.name);
  t.diagnostic(`starved members seen failing their readiness probe: ${starved.filter((m) => unready.includes(m)).join(', ') || 'none'}`);
  const m = membership.stop();
  const removals = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.reason === 'RemoveMember');
  t.diagnostic(`starved ${starved.join(', ')}; membership ${m.fewest}–${m.most}; removals: ${removals.map((e) => e.message).join(' | ') || 'none'}`);
  assert.deepEqual(removals.map((e) => e.message), [], 'no member removed');
  assert.deepEqual(back, members, 'the same members');
  assert.deepEqual(await memberNames(bed, name), members);
  operator.succeeded();
});

for (const onVolume of [true, false]) {
  test(`finding 1: a member ${onVolume ? 'with' : 'without'} a volume on a node cut off for ${FAULT_MS / 1000} s (${REPLACE_AFTER_S} s threshold): ${onVolume ? 'it rejoins with its own data' : 'it is replaced exactly once'}`, async (t) => {
    const bed = await testbed(t, onVolume ? 'cutvolume' : 'cutempty');
    const operator = startOperator(t, bed.namespace, ['--replace-member-after', String(REPLACE_AFTER_S)]);
    const name = 'cut';
    // One member a node.
    const { members, load, leader } = await loadedCluster(bed, name, { size: 3, pod: onVolume ? { ...ON_VOLUMES, antiAffinity: true } : { antiAffinity: true } }, 180_000, { recorded: true });
    const victim = (await bed.pods(name)).find((p) => p.metadata?.name !== leader);
    assert.ok(victim?.metadata?.name && victim.spec?.nodeName, 'a follower to cut off');
    const ids = await memberIds(bed, name);
    const heal = await inject(t, { kind: 'node-partition', node: victim.spec.nodeName });
    await new Promise((r) => setTimeout(r, FAULT_MS));
    await heal();
    const back = await eventually('healed: 3 members settled', 300_000, async () => {
      const now = await bed.settledMembers(name, 3);
      return now && now.includes(victim.metadata?.name ?? '') === onVolume ? now : undefined;
    }).catch(async (err: unknown) => {
      // What the operator was waiting on, for whoever reads the failure (a full run saw it wait 5 minutes).
      throw new Error(`${String(err)}; ${await describeCluster(bed, name)}`);
    });
    await new Promise((r) => setTimeout(r, 3000));
    checkLoad(t, `${victim.metadata.name} cut off`, await load.finish());
    const removals = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.reason === 'RemoveMember').map((e) => e.message ?? '');
    t.diagnostic(`${victim.metadata.name} on ${victim.spec.nodeName} cut off; removals: ${removals.join(' | ') || 'none'}`);
    if (onVolume) {
      assert.deepEqual(back, members, 'the same members');
      assert.equal((await memberIds(bed, name)).get(victim.metadata.name), ids.get(victim.metadata.name), 'under its own ID, on its own data');
      assert.deepEqual(removals, [], 'no member removed');
    } else {
      // Its replacement waits for a node (one member a node, and the cut node takes none): a learner added
      // meanwhile never answers and is removed again. The member itself goes exactly once.
      const removed = `RemoveMember ${victim.metadata.name ?? ''}:`;
      assert.equal(removals.filter((r) => r.startsWith(removed)).length, 1, 'replaced exactly once');
      assert.ok(removals.every((r) => r.startsWith(removed) || /learner never answered/.test(r)), 'no other member removed');
    }
    operator.succeeded();
  });
}

test(`finding 8: a majority gone for good, one member left answering and one on a volume on a node killed for ${FAULT_MS / 2000} s (${REPLACE_AFTER_S * 3} s threshold), fromSurvivor: auto: the survivor is chosen only once the silent one is heard`, async (t) => {
  const bed = await testbed(t, 'survivorwait');
  // The node comes back within the threshold: until then the silent member may hold the newest data, and a
  // survivor chosen without it would have its claim deleted.
  const operator = startOperator(t, bed.namespace, ['--replace-member-after', String(REPLACE_AFTER_S * 3)]);
  const name = 'survivorwait';
  // The default version forces a survivor safely (3.5.22+): with 3.5.17, a survivor killed with its node dropped
  // the last writes its database held once forced (etcd issue 20009; two full runs saw 400 of 500 keys survive).
  await bed.create(name, { size: 5, pod: ON_VOLUMES, restorePolicy: { fromSurvivor: 'auto' } });
  await eventually('5 members on volumes', 240_000, () => bed.settledMembers(name, 5));
  const endpoint = await bed.clientEndpoint(name);
  const keys = Array.from({ length: 500 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('500 keys written', 60_000, async () => { await etcdPutMany(endpoint, keys); return true; });
  // A write commits on three of five: the two members that stay must hold every key, or losing the other three
  // loses the last writes with them, whoever recovers (a full run saw 400 of 500 survive).
  await eventually('every member at the same revision', 60_000, async () => (new Set((await memberRevisions(bed, name)).values()).size === 1 ? true : undefined));

  // Paused while three members go for good, pods and claims.
  await bed.patchSpec(name, { paused: true });
  await eventually('paused', 30_000, async () => ((await bed.get(name)).status?.phase === 'Paused' ? true : undefined));
  const pods = await bed.pods(name);
  const silent = pods[0];
  const answering = pods.find((p) => p.spec?.nodeName !== silent?.spec?.nodeName);
  assert.ok(silent?.metadata?.name && silent.spec?.nodeName && answering?.metadata?.name, 'members on two nodes');
  const lost = pods.filter((p) => p !== silent && p !== answering).map((p) => p.metadata?.name ?? '');
  for (const member of lost) {
    await bed.core.deleteNamespacedPod({ name: member, namespace: bed.namespace, gracePeriodSeconds: 0 });
    await bed.core.deleteNamespacedPersistentVolumeClaim({ name: member, namespace: bed.namespace });
  }
  await eventually('the three claims gone', 60_000, async () =>
    ((await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace })).items.length === 2 ? true : undefined));
  const revive = await inject(t, { kind: 'node-kill', node: silent.spec.nodeName });
  await bed.patchSpec(name, { paused: false });
  await new Promise((r) => setTimeout(r, FAULT_MS / 2));
  const whileSilent = await bed.get(name);
  const recoveriesWhileSilent = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.reason === 'StartSurvivorRecovery');
  await revive();

  const recovered = await eventually('back to 5 members from a survivor', 300_000, async () => {
    const c = await bed.get(name);
    return c.status?.survivorRecovery?.completedAt && (await bed.settledMembers(name, 5)) ? c : undefined;
  });
  t.diagnostic(`lost ${lost.join(', ')}; ${silent.metadata.name} silent on ${silent.spec.nodeName}, ${answering.metadata.name} answering; `
    + `while silent: ${whileSilent.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.message ?? ''}`).join('; ') ?? ''}; recovered: ${JSON.stringify(recovered.status?.survivorRecovery)}`);
  assert.deepEqual(recoveriesWhileSilent.map((e) => e.message), [], 'no survivor chosen while a member on a volume was silent');
  assert.equal(whileSilent.status?.survivorRecovery, undefined, 'no survivor recorded while it was silent');
  assert.ok([silent.metadata.name, answering.metadata.name].includes(recovered.status?.survivorRecovery?.survivor ?? ''), 'a survivor of the two');
  const held = await eventually('keys readable', 30_000, () => etcdGetPrefix(endpoint, 'key-'));
  assert.equal(held.size, keys.length, 'every key');
  operator.succeeded();
});
