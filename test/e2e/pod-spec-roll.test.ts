// Issue 33: every change to spec.pod reaches the running members, one at a time by the roll rules, under writes;
// a change of labels and annotations only is patched onto the pods and restarts nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, membersOnEveryNode, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { loadedCluster } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';
import { kubectl } from '../support/kubectl.js';

const uids = (pods: V1Pod[]): Record<string, string> => Object.fromEntries(pods.map((p) => [p.metadata?.name ?? '', p.metadata?.uid ?? '']));

test('spec.pod changes reach every member: resources roll them one at a time on their volumes under writes; labels and annotations are patched, nothing restarted', async (t) => {
  const bed = await testbed(t, 'podroll');
  const operator = startOperator(t, bed.namespace);
  const name = 'rolled';
  const { members, load } = await loadedCluster(bed, name, { size: 3, pod: { ...ON_VOLUMES, resources: { requests: { cpu: '50m', memory: '64Mi' } } } }, 240_000, { recorded: true });
  const before = uids(await bed.pods(name));

  // Resources, in forms the API server normalises: the roll must end, not go on for ever.
  const started = Date.now();
  await bed.patchSpec(name, { pod: { ...ON_VOLUMES, resources: { requests: { cpu: '0.1', memory: '96Mi' } } } });
  let progress = '';
  let mostUnready = 0;
  const rolled = await eventually('every member on the new resources', 300_000, async () => {
    const c = await bed.get(name);
    const p = c.status?.conditions?.find((x) => x.type === 'Progressing' && x.reason === 'RollingSpec');
    if (p?.message) progress = p.message;
    const pods = await bed.pods(name);
    mostUnready = Math.max(mostUnready, 3 - pods.filter((x) => x.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True')).length);
    const applied = pods.length === 3 && pods.every((x) => x.spec?.containers[0]?.resources?.requests?.['memory'] === '96Mi');
    return applied && (await bed.settledMembers(name, 3)) ? pods : undefined;
  });
  t.diagnostic(`resources rolled onto 3 members in ${((Date.now() - started) / 1000).toFixed(1)} s; last progress: ${progress}; at most ${mostUnready} unready at once`);
  assert.match(progress, /members rolled \d of 3/);
  assert.ok(mostUnready <= 1, `one member at a time: ${mostUnready} were unready at once`);
  assert.deepEqual(rolled.map((p) => p.metadata?.name).sort(), members, 'the same members, restarted on their volumes');
  assert.ok(rolled.every((p) => before[p.metadata?.name ?? ''] !== p.metadata?.uid), 'each pod made anew');
  // Settled means settled: no further restart.
  const settled = uids(rolled);
  await new Promise((r) => setTimeout(r, 20_000));
  assert.deepEqual(uids(await bed.pods(name)), settled, 'no member restarted again once rolled');
  checkLoad(t, 'resources rolled', await load.finish());

  // Labels and annotations: patched in place. A label someone put by hand stays.
  const [first = ''] = members;
  kubectl(['-n', bed.namespace, 'label', 'pod', first, 'by-hand=yes']);
  await bed.patchSpec(name, { pod: { ...ON_VOLUMES, resources: { requests: { cpu: '0.1', memory: '96Mi' } }, labels: { team: 'storage' }, annotations: { 'example.com/owner': 'ops' } } });
  const labelled = await eventually('the label and annotation on every pod', 120_000, async () => {
    const pods = await bed.pods(name);
    return pods.length === 3 && pods.every((p) => p.metadata?.labels?.['team'] === 'storage' && p.metadata.annotations?.['example.com/owner'] === 'ops') ? pods : undefined;
  });
  assert.deepEqual(uids(labelled), settled, 'no pod made anew for labels');
  assert.ok(labelled.every((p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) === 0), 'no container restarted');
  // A merge patch removes a key by setting it to null.
  await bed.transport.call('PATCH', `${bed.path}/${name}`, { spec: { pod: { labels: null } } }, 'application/merge-patch+json');
  const unlabelled = await eventually('the label removed from every pod', 120_000, async () => {
    const pods = await bed.pods(name);
    return pods.length === 3 && pods.every((p) => p.metadata?.labels?.['team'] === undefined) ? pods : undefined;
  });
  assert.deepEqual(uids(unlabelled), settled, 'still no pod made anew');
  assert.equal(unlabelled.find((p) => p.metadata?.name === first)?.metadata?.labels?.['by-hand'], 'yes', 'a label put by hand is not the operator\'s to remove');
  assert.ok(unlabelled.every((p) => p.metadata?.labels?.['etcd_cluster'] === name), 'the operator\'s own labels stay');
  operator.succeeded();
});

test('members running as root, on volumes, roll onto "restricted" pods, each replaced by a member on a new volume, under writes; the namespace then enforces the standard and a member made anew is admitted', async (t) => {
  const bed = await testbed(t, 'podsec', 'privileged');
  const operator = startOperator(t, bed.namespace);
  const name = 'rooted';
  // As the pods of earlier operator versions (and the CoreOS operator's) ran: etcd as root, its data root's.
  const { members, load } = await loadedCluster(bed, name, { size: 3, pod: { ...ON_VOLUMES, securityContext: { runAsUser: 0 } } }, 240_000, { recorded: true });
  const rootPods = await bed.pods(name);
  assert.ok(rootPods.every((p) => p.spec?.securityContext?.runAsUser === 0 && p.spec.securityContext.runAsNonRoot === false), 'the members start as root');

  const started = Date.now();
  await bed.transport.call('PATCH', `${bed.path}/${name}`, { spec: { pod: { securityContext: null } } }, 'application/merge-patch+json');
  // Settled and spread over every node: a roll's replacements can leave two members on one node, and the move
  // that spreads them again would otherwise still be under way, and may remove the member deleted below (seen:
  // the move's removal chose it, its pod being made anew, and it never came back under its name).
  const rolled = await eventually('every member on a non-root pod, one a node', 300_000, async () => {
    const pods = await bed.pods(name);
    const nonRoot = pods.length === 3 && pods.every((p) => p.spec?.securityContext?.runAsUser === 65532 && p.spec.securityContext.runAsNonRoot === true);
    return nonRoot && (await membersOnEveryNode(bed, name, 3)) ? pods : undefined;
  });
  t.diagnostic(`3 root members rolled onto non-root pods in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // Not restarted on the data root wrote, which a volume that ignores fsGroup would keep from the new user: replaced.
  const now = rolled.map((p) => p.metadata?.name ?? '').sort();
  assert.deepEqual(now.filter((n) => members.includes(n)), [], 'every root member was replaced');
  checkLoad(t, 'rolled from root', await load.finish());

  // Now the namespace refuses any pod that breaks "restricted": a member pod made anew must pass it.
  kubectl(['label', 'namespace', bed.namespace, 'pod-security.kubernetes.io/enforce=restricted', '--overwrite']);
  const [victim = ''] = now;
  const victimUid = rolled.find((p) => p.metadata?.name === victim)?.metadata?.uid;
  await bed.core.deleteNamespacedPod({ name: victim, namespace: bed.namespace });
  await eventually('the deleted member back under "restricted"', 180_000, async () => {
    const pods = await bed.pods(name);
    const back = pods.find((p) => p.metadata?.name === victim && p.metadata.uid !== victimUid);
    return back && (await bed.settledMembers(name, 3)) ? back : undefined;
  });
  operator.succeeded();
});
