// lab: exclusive — nodes killed, cut off, rebooted and drained; zones lost.
// Issue 18: a member on a lost node is removed (the fence), its pod deleted at once and a new member added on a
// live node, each under a write load whose every acknowledged write is checked; a reboot replaces nothing; a
// drain of every node in turn completes by itself, the operator moving each member before its node empties.
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { eventually, lab } from '../support/lab.js';
import { ON_VOLUMES, membersOnEveryNode, testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { loadedCluster } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';
import { memberHashes, memberNames } from '../support/chaos.js';
import { inject, rebootNode } from '../support/faults.js';
import type { Fault } from '../support/faults.js';
import { nodeReadiness, untilReadiness } from '../support/lab-pods.js';
import { kubectlAsync } from '../support/kubectl.js';
import type { ClusterSpec } from '../../src/api/etcd-cluster.js';

/** A removed member's claim is deleted this long after: short, so the test sees the leftovers go. */
const KEEP_REMOVED_CLAIMS_S = 20;
/** A member silent on a NotReady node is replaced this long after (default 30 s): the mechanism, in less of CI's time. */
const REPLACE_ON_NODE_LOSS_S = 10;
const seconds = (ms: number): string => (ms / 1000).toFixed(1);

/** When (ms since the epoch) the node was first seen NotReady, polled every half second until stopped. */
function watchReadiness(core: CoreV1Api, node: string): { notReadyAt(): number | undefined; stop(): void } {
  let at: number | undefined;
  const timer = setInterval(() => {
    void nodeReadiness(core, node).then((ready) => { if (ready !== 'True' && at === undefined) at = Date.now(); }, () => undefined);
  }, 500);
  return { notReadyAt: () => at, stop: () => { clearInterval(timer); } };
}

const eventsAbout = async (bed: Testbed, reason: string, member: string): Promise<string[]> =>
  (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .filter((e) => e.reason === reason && e.message?.startsWith(`${reason} ${member}:`)).map((e) => e.message ?? '');

const podGone = async (bed: Testbed, name: string): Promise<boolean> =>
  bed.core.readNamespacedPod({ name, namespace: bed.namespace }).then(() => false, () => true);

interface Loss {
  spec: ClusterSpec & { size: number };
  /** The fault, around the node chosen: the one with the most members, the leader's among equals (the harder case). */
  fault(node: string, zone: string): Fault;
  what: string;
}

/**
 * The chosen member's node is lost under a write load: back at full size without it, the member out of etcd's
 * list and its pod object gone; the node back, nothing stale rejoins, the members are spread over it again,
 * its claim (if any) is deleted after the grace period, and every member holds the same data. Answers the
 * time from the fault to full size.
 */
async function survivesLoss(t: TestContext, prefix: string, loss: Loss): Promise<number> {
  const bed = await testbed(t, prefix);
  const operator = startOperator(t, bed.namespace, ['--keep-removed-claims', String(KEEP_REMOVED_CLAIMS_S), '--replace-on-node-loss-after', String(REPLACE_ON_NODE_LOSS_S)]);
  const name = 'lost';
  const { load, leader } = await loadedCluster(bed, name, loss.spec, 240_000, { recorded: true });
  const pods = await bed.pods(name);
  // The node with the most members (2 of 5 spread 2-2-1), the leader's among equals.
  const count = (n: string | undefined): number => pods.filter((p) => p.spec?.nodeName === n).length;
  const leaders = pods.find((p) => p.metadata?.name === leader)?.spec?.nodeName;
  const node = [...new Set(pods.map((p) => p.spec?.nodeName ?? ''))].sort((a, b) => count(b) - count(a) || Number(b === leaders) - Number(a === leaders))[0] ?? '';
  assert.ok(node, 'a member\'s node');
  const zone = lab().nodes.find((n) => n.name === node)?.zone ?? '';
  const onNode = pods.filter((p) => p.spec?.nodeName === node).map((p) => p.metadata?.name ?? '');
  const readiness = watchReadiness(bed.core, node);
  t.after(() => { readiness.stop(); });
  const started = Date.now();
  const heal = await inject(t, loss.fault(node, zone));
  await eventually('back at full size, all ready, none on the lost node', 300_000, async () => {
    const now = await bed.settledMembers(name, loss.spec.size);
    return now && !now.some((m) => onNode.includes(m)) ? now : undefined;
  });
  const fullSizeMs = Date.now() - started;
  const notReadyMs = (readiness.notReadyAt() ?? Date.now()) - started;
  t.diagnostic(`${loss.what}: ${onNode.join(', ')} on ${node} (${zone}); NotReady after ${seconds(notReadyMs)} s; `
    + `back at ${loss.spec.size} ready members ${seconds(fullSizeMs)} s after the fault (${seconds(fullSizeMs - notReadyMs)} s after NotReady)`);
  for (const lost of onNode) {
    assert.ok(!(await memberNames(bed, name)).includes(lost), `${lost} is out of etcd's member list`);
    assert.match((await eventsAbout(bed, 'RemoveMember', lost)).join(' | '), /is lost and it answered nothing/, `${lost} removed for its lost node`);
    assert.ok(await podGone(bed, lost), `${lost}'s pod object is gone, without waiting for the node`);
  }

  await heal();
  const healed = Date.now();
  await untilReadiness(bed.core, node, 'True', 120_000);
  // The node's kubelet learns its pods are gone and stops them; nothing it ran comes back. The node is free
  // again, so the members sharing a node meanwhile are spread back over it, one at a time.
  const spread = await eventually('the members spread over every node again', 300_000, () => membersOnEveryNode(bed, name, loss.spec.size));
  t.diagnostic(`${loss.what}: spread over all ${lab().nodes.length} nodes again ${seconds(Date.now() - healed)} s after the heal: ${spread.join(', ')}`);
  for (const lost of onNode) {
    assert.ok(!(await memberNames(bed, name)).includes(lost), `${lost} did not rejoin once its node came back`);
    assert.ok(await podGone(bed, lost), `no pod of ${lost} is left`);
  }
  assert.deepEqual(await memberNames(bed, name), spread, 'etcd lists exactly the members with pods');
  const moves = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.reason === 'AddMember' && /spreading the members/.test(e.message ?? ''));
  assert.ok(moves.length > 0, 'a member was added to spread them, not moved by a removal first');
  if (loss.spec.pod?.persistentVolumeClaimSpec) {
    await eventually('the removed members\' claims deleted after their grace period', 120_000, async () => {
      const claims = (await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace })).items.map((c) => c.metadata?.name ?? '');
      return claims.some((c) => onNode.includes(c)) ? undefined : true;
    });
  }
  checkLoad(t, loss.what, await load.finish());
  const { revision, hashes } = await memberHashes(bed, name);
  assert.equal(new Set(hashes.values()).size, 1, `every member has the same HashKV at revision ${revision}`);
  operator.succeeded();
  return fullSizeMs;
}

test('node kill, members on volumes: the member is replaced like any, its claim kept aside and then deleted, never bound to another member', async (t) => {
  await survivesLoss(t, 'killvolume', { spec: { size: 3, pod: ON_VOLUMES }, fault: (node) => ({ kind: 'node-kill', node }), what: 'node kill, 3 members on volumes' });
});

test('node partition longer than the replacement time: the cut-off member is removed and replaced; healed, it cannot rejoin and is cleaned up', async (t) => {
  await survivesLoss(t, 'partition', { spec: { size: 3, pod: ON_VOLUMES }, fault: (node) => ({ kind: 'node-partition', node }), what: 'node partition, 3 members on volumes' });
});

// Members without volumes lose their node through a zone outage here only: with 5 members it takes two at once,
// where 3 members (a test of its own until CI ran out of time) lose one.
test('zone outage with 5 members spread 2-2-1: the two members of the lost zone are replaced one at a time, the cluster serving throughout; spread again when the zone returns', async (t) => {
  await survivesLoss(t, 'zone5', { spec: { size: 5 }, fault: (_node, zone) => ({ kind: 'zone-outage', zone }), what: 'zone outage, 5 members without volumes' });
});

test('node reboot: the member comes back on its data, nothing replaced, nothing lost', async (t) => {
  const bed = await testbed(t, 'reboot');
  const operator = startOperator(t, bed.namespace);
  const name = 'rebooted';
  const { members, load, leader } = await loadedCluster(bed, name, { size: 3, pod: ON_VOLUMES }, 240_000, { recorded: true });
  const victim = (await bed.pods(name)).find((p) => p.metadata?.name !== leader);
  const node = victim?.spec?.nodeName ?? '';
  assert.ok(node, 'a follower\'s node');
  const started = Date.now();
  await rebootNode(node);
  // Settled with the member's etcd started again since the reboot began.
  const restarted = (p: V1Pod | undefined): boolean => p?.status?.containerStatuses?.some((c) => new Date(c.state?.running?.startedAt ?? 0).getTime() > started) ?? false;
  const back = await eventually('3 members settled after the reboot', 180_000, async () => {
    const now = await bed.settledMembers(name, 3);
    return now && restarted((await bed.pods(name)).find((p) => p.metadata?.name === victim?.metadata?.name)) ? now : undefined;
  });
  t.diagnostic(`${victim?.metadata?.name ?? ''} on ${node}: all 3 ready ${seconds(Date.now() - started)} s after the reboot began`);
  assert.deepEqual(back, members, 'the same members: nothing replaced');
  assert.deepEqual(await memberNames(bed, name), members, 'etcd lists the same members');
  assert.deepEqual(await eventsAbout(bed, 'RemoveMember', victim?.metadata?.name ?? ''), [], 'no removal');
  checkLoad(t, 'node reboot', await load.finish());
  operator.succeeded();
});

/**
 * `kubectl drain` of the node, as a person would run it, past the lab's volume provisioner: it runs a pod of no
 * controller to delete a volume an earlier test (or this one's removed members) left, and kubectl refuses to drain
 * a node holding one (a real cluster would have such a pod finish too, or the person draining would wait for it).
 * It waits until none is there, and drains again, up to three times, when one appeared meanwhile.
 */
async function drain(bed: Testbed, node: string, timeoutS: number): Promise<void> {
  await eventually(`no uncontrolled pod on ${node}`, 120_000, async () => {
    const pods = (await bed.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
    return pods.every((p) => p.metadata?.ownerReferences?.some((o) => o.controller) || ['Succeeded', 'Failed'].includes(p.status?.phase ?? '')) ? true : undefined;
  });
  for (let attempt = 1; ; attempt++) {
    const refused = await kubectlAsync(['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', `--timeout=${timeoutS}s`], (timeoutS + 60) * 1000).then(() => undefined, (err: unknown) => err as Error);
    if (!refused) return;
    if (attempt === 3 || !/declare no controller[^\n]*local-path-storage\/helper-pod/.test(refused.message)) throw refused;
    await new Promise((r) => setTimeout(r, 5000));
  }
}

test('drain of every node in turn (a rolling node upgrade) under writes: each member is replaced elsewhere first, every drain completes by itself, nothing lost', async (t) => {
  const bed = await testbed(t, 'drain');
  const operator = startOperator(t, bed.namespace);
  const name = 'drained';
  const { load } = await loadedCluster(bed, name, { size: 3, pod: ON_VOLUMES }, 240_000, { recorded: true });
  const started = Date.now();
  const drains: string[] = [];
  t.after(async () => { for (const { name: node } of lab().nodes) await kubectlAsync(['uncordon', node], 60_000); });
  for (const { name: node } of lab().nodes) {
    const before = (await bed.pods(name)).filter((p: V1Pod) => p.spec?.nodeName === node).map((p) => p.metadata?.name ?? '');
    const from = Date.now();
    // No person in the loop: kubectl's evictions are refused by the budget until the operator has moved the member.
    await drain(bed, node, 600);
    drains.push(`${node} (${before.length} member(s)) ${seconds(Date.now() - from)} s`);
    const members = await eventually('3 members settled after the drain', 120_000, () => bed.settledMembers(name, 3));
    assert.ok(!members.some((m) => before.includes(m)), `no member left on ${node}`);
    for (const m of before) assert.match((await eventsAbout(bed, 'RemoveMember', m)).join(' | '), /scaling down to 3/, `${m} removed once its replacement had joined`);
    await kubectlAsync(['uncordon', node], 60_000);
  }
  const report = await load.finish();
  t.diagnostic(`drained ${drains.join(', ')}; all three in ${seconds(Date.now() - started)} s`);
  checkLoad(t, 'drain of every node', report);
  const adds = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.reason === 'AddMember').map((e) => e.message ?? '');
  assert.ok(adds.some((m) => /is being drained: adding the replacement of/.test(m)), `replacements added first: ${adds.join(' | ')}`);
  const { revision, hashes } = await memberHashes(bed, name);
  assert.equal(new Set(hashes.values()).size, 1, `every member has the same HashKV at revision ${revision}`);
  operator.succeeded();
});

test('a member that cannot be placed elsewhere holds its node\'s drain back, the cluster keeping its members, and an Event says why', async (t) => {
  const bed = await testbed(t, 'drainheld');
  const operator = startOperator(t, bed.namespace, ['--replace-member-after', '30']);
  const name = 'held';
  // One member a node, as a rule, on three nodes: a replacement has nowhere to go.
  await bed.create(name, { size: 3, pod: { antiAffinity: true } });
  const members = await eventually('3 members, one a node', 180_000, () => bed.settledMembers(name, 3));
  const node = lab().nodes[0]?.name ?? '';
  const onNode = (await bed.pods(name)).find((p) => p.spec?.nodeName === node)?.metadata?.name ?? '';
  t.after(async () => { await kubectlAsync(['uncordon', node], 60_000); });
  await assert.rejects(drain(bed, node, 60), /timed out|error when evicting|global timeout/,
    'the drain does not complete');
  // No replacement is added that no node could take (issue 32, finding 13): the Event says so, naming the rule.
  const why = await eventually('an Event saying why', 60_000, async () => (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .find((e) => e.type === 'Warning' && e.reason === 'TooFewNodes')?.message);
  t.diagnostic(why);
  assert.match(why, /antiAffinity places one member per node/);
  const pods = await bed.pods(name);
  assert.ok(pods.some((p) => p.metadata?.name === onNode && p.spec?.nodeName === node), `${onNode} still runs on ${node}`);
  assert.deepEqual((await memberNames(bed, name)).filter((m) => members.includes(m)), members, 'every member kept its place');
  await kubectlAsync(['uncordon', node], 60_000);
  const back = await eventually('3 members settled once the node is uncordoned', 180_000, async () => {
    const now = await bed.settledMembers(name, 3);
    return now && (await memberNames(bed, name)).length === 3 ? now : undefined;
  });
  assert.deepEqual(back, members, 'the members it had');
  operator.succeeded();
});
