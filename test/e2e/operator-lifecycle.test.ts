// Issue 16: the operator as a Deployment on the lab, rolled while it scales a cluster, then hung.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_INSTALL } from '../../src/install/manifests.js';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { kubectl } from '../support/kubectl.js';
import { loggedAt } from '../support/operator-process.js';
import { followOperatorLogs, installOperator, operatorPods, operatorReady } from '../support/in-cluster.js';
import type { ContainerLog } from '../support/in-cluster.js';
import { watchMembership } from '../support/chaos.js';
import { inject } from '../support/faults.js';

/** Each container run that led: when it began leading, and when it acted. */
const terms = (runs: ContainerLog[]): { pod: string; led: number; acts: number[] }[] => runs
  .flatMap((r) => loggedAt(r.lines, 'leading').slice(0, 1).map((led) => ({ pod: r.pod, led, acts: loggedAt(r.lines, 'acting') })))
  .sort((a, b) => a.led - b.led);

test('the operator Deployment rolled during a scale-up: exactly one replica acts at any time; hung, it is restarted by its liveness probe', async (t) => {
  const bed = await testbed(t, 'lifecycle');
  installOperator({ ...DEFAULT_INSTALL, namespace: bed.namespace, image: 'etcd-operator:dev', imagePullPolicy: 'Never' });
  await operatorReady(bed);
  const runs = followOperatorLogs(t, bed);
  const name = 'rolled';
  await bed.create(name, { size: 3 });
  await eventually('3 members', 180_000, () => bed.settledMembers(name, 3));
  const membership = watchMembership(t, bed, name);

  await bed.patchSpec(name, { size: 5 });
  await eventually('the leader acting on the scale', 60_000, () => Promise.resolve(runs.some((r) => loggedAt(r.lines, 'acting').length > 0) || undefined));
  kubectl(['-n', bed.namespace, 'rollout', 'restart', 'deployment/etcd-operator']);
  kubectl(['-n', bed.namespace, 'rollout', 'status', 'deployment/etcd-operator', '--timeout=180s']);
  await eventually('5 members', 240_000, () => bed.settledMembers(name, 5));
  // The old replica may finish the scale before it is stopped; the rolled-in one then leads once the old
  // one's lease is released, which can be after the members settle.
  await eventually('the rolled-in replica leading', 60_000, () => Promise.resolve(terms(runs).length >= 2 || undefined));
  const report = membership.stop();
  const led = terms(runs);
  t.diagnostic(`terms: ${led.map((x) => `${x.pod} led at +${x.led - (led[0]?.led ?? 0)} ms, acted ${x.acts.length} times`).join('; ')}; ` +
    `membership samples ${report.samples}, most learners ${report.mostLearners}`);
  assert.ok(led.length >= 2, 'the rolled-in replica led after the old one');
  for (const [i, term] of led.entries()) {
    const next = led[i + 1];
    assert.deepEqual(term.acts.filter((at) => at < term.led), [], `${term.pod} acted only while it led`);
    if (next) assert.deepEqual(term.acts.filter((at) => at >= next.led), [], `${term.pod} took no action once ${next.pod} led`);
  }
  assert.ok(report.mostLearners <= 1, `never two membership changes at once (most learners ${report.mostLearners})`);

  // A replica whose process answers nothing (stopped, as a blocked event loop is) fails its liveness probe.
  const [hung] = await operatorPods(bed);
  const pod = hung?.metadata?.name ?? '';
  const restartsBefore = hung?.status?.containerStatuses?.[0]?.restartCount ?? 0;
  const hungAt = Date.now();
  await inject(t, { kind: 'hang', pod, namespace: bed.namespace });
  await eventually('the hung operator restarted by the kubelet', 180_000, async () => {
    const [now] = (await operatorPods(bed)).filter((p) => p.metadata?.name === pod);
    return (now?.status?.containerStatuses?.[0]?.restartCount ?? 0) > restartsBefore || undefined;
  });
  t.diagnostic(`restarted ${Date.now() - hungAt} ms after it hung`);
  await operatorReady(bed);
  // And the restarted replica leads and works: a scale down is carried out.
  await bed.patchSpec(name, { size: 3 });
  await eventually('3 members', 240_000, () => bed.settledMembers(name, 3));
});
