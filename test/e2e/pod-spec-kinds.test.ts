// suite: extended — eighteen member replacements (six kinds, a roll each): that each kind changes the template digest
// is the unit test's (pod-template), and pod-spec-roll shows a roll carrying a changed template onto every member in the gate.
// Issue 33: every kind of spec.pod change reaches the running members, one at a time by the roll rules, under
// writes. pod-spec-roll covers resources (restarted on volumes), labels and annotations (patched) and the user
// (root to restricted); here the other kinds, on members without volumes, so each is replaced, its successor first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { SchedulingV1Api } from '@kubernetes/client-node';
import { adminKubeConfig, eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { loggedAt, startOperator } from '../support/operator-process.js';
import { loadedCluster } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';
import type { ClusterSpec } from '../../src/api/etcd-cluster.js';

type Pod = NonNullable<ClusterSpec['pod']>;

test('etcdEnv, tolerations, nodeSelector, spread, priorityClassName and affinity each reach every member, one at a time, each member replaced by its successor first, under writes: 0 lost', async (t) => {
  const bed = await testbed(t, 'podkinds');
  const scheduling = adminKubeConfig().makeApiClient(SchedulingV1Api);
  const priorityClass = `etcd-${bed.namespace}`;
  await scheduling.createPriorityClass({ body: { metadata: { name: priorityClass }, value: 1000, description: 'pod-spec-kinds test' } });
  t.after(async () => { await scheduling.deletePriorityClass({ name: priorityClass }).catch(() => undefined); });
  const operator = startOperator(t, bed.namespace);
  const name = 'kinds';
  const { load } = await loadedCluster(bed, name, { size: 3 }, 240_000, { recorded: true });

  // Each change on top of the ones before, and how to see it on a member pod.
  const affinity = { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] } }] } };
  const steps: [string, Pod, (p: V1Pod) => boolean][] = [
    ['etcdEnv', { etcdEnv: [{ name: 'ETCD_LOG_LEVEL', value: 'warn' }] },
      (p) => p.spec?.containers.find((c) => c.name === 'etcd')?.env?.some((e) => e.name === 'ETCD_LOG_LEVEL' && e.value === 'warn') ?? false],
    ['tolerations', { tolerations: [{ key: 'example.com/maintenance', operator: 'Exists', effect: 'NoSchedule' }] },
      (p) => p.spec?.tolerations?.some((x) => x.key === 'example.com/maintenance') ?? false],
    ['nodeSelector', { nodeSelector: { 'kubernetes.io/os': 'linux' } }, (p) => p.spec?.nodeSelector?.['kubernetes.io/os'] === 'linux'],
    ['spread', { spread: 'Required' }, (p) => p.spec?.topologySpreadConstraints?.some((c) => c.whenUnsatisfiable === 'DoNotSchedule') ?? false],
    ['priorityClassName', { priorityClassName: priorityClass }, (p) => p.spec?.priorityClassName === priorityClass],
    ['affinity', { affinity }, (p) => p.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length === 1],
  ];
  let pod: Pod = {};
  for (const [kind, change, shows] of steps) {
    pod = { ...pod, ...change };
    const before = new Set((await bed.pods(name)).map((p) => p.metadata?.name));
    const started = Date.now();
    await bed.patchSpec(name, { pod });
    let progress = '';
    let mostUnready = 0;
    const rolled = await eventually(`${kind} on every member`, 300_000, async () => {
      const c = await bed.get(name);
      const p = c.status?.conditions?.find((x) => x.type === 'Progressing' && x.reason === 'RollingSpec');
      if (p?.message) progress = p.message;
      const pods = (await bed.pods(name)).filter((x) => !x.metadata?.deletionTimestamp);
      // Three voters, and at most one member missing or unready at a time (a successor joins before its predecessor goes).
      mostUnready = Math.max(mostUnready, 3 - pods.filter((x) => x.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True')).length);
      return pods.length === 3 && pods.every(shows) && (await bed.settledMembers(name, 3)) ? pods : undefined;
    });
    t.diagnostic(`${kind}: rolled onto 3 members in ${((Date.now() - started) / 1000).toFixed(1)} s; last progress: ${progress}; at most ${mostUnready} unready at once`);
    assert.match(progress, /members rolled \d of 3/, `${kind}: progress in status`);
    assert.ok(mostUnready <= 1, `${kind}: one member at a time (${mostUnready} unready at once)`);
    assert.deepEqual(rolled.filter((p) => before.has(p.metadata?.name)).map((p) => p.metadata?.name), [], `${kind}: every member replaced`);
    if (kind === 'etcdEnv') {
      // Events say so (client-go lets 25 through per object, then one per 5 minutes, and etcd's "unhealthy cluster"
      // right after a change makes the operator try an add again: not every member's is kept; the log has each).
      const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items;
      assert.ok(events.some((e) => e.reason === 'AddMember' && /applying the changed spec\.pod/.test(e.message ?? '')), 'an Event for the roll');
    }
  }
  const added = loggedAt(operator.logs, 'acting', (e) => e.action?.type === 'AddMember' && (e.action.reason ?? '').includes('applying')).length;
  assert.ok(added >= steps.length * 3, `a successor added for every member of every roll: ${added}`);
  checkLoad(t, 'six kinds of spec.pod change rolled', await load.finish());
  operator.succeeded();
});
