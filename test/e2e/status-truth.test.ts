// Issue 17: what a user sees when a spec cannot run: admission refuses what it can check; what it cannot is a
// Degraded condition and a Warning Event naming the pod and the cause within a minute, and fixing the spec
// brings the cluster up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import type { ClusterSpec } from '../../src/api/etcd-cluster.js';
import { eventually, lab } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';

/** The manifest of the Operator articles this project grew from, verbatim. */
const SEED_MANIFEST = `apiVersion: "etcd.database.coreos.com/v1beta2"
kind: "EtcdCluster"
metadata:
  name: "example-etcd-cluster"
spec:
  size: 3
  version: "3.2.13"
`;

/** kubectl apply in the namespace: its exit status and what it printed. */
function apply(namespace: string, manifest: string): { ok: boolean; output: string } {
  try {
    return { ok: true, output: execFileSync(lab().kubectl, ['--kubeconfig', lab().kubeconfig, '-n', namespace, 'apply', '-f', '-'], { input: manifest, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 }) };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/**
 * Within 60 s of `since`: Degraded=True with this reason and a message matching `cause`, and a Warning Event
 * saying the same. Answers how long it took.
 */
async function reported(bed: Testbed, name: string, reason: string, cause: RegExp, since: number): Promise<number> {
  const condition = await eventually(`${name}: Degraded ${reason}`, 60_000, async () => {
    const c = (await bed.get(name)).status?.conditions?.find((x) => x.type === 'Degraded');
    return c?.status === 'True' && c.reason === reason ? c : undefined;
  });
  const seenAfter = Date.now() - since;
  assert.match(condition.message ?? '', cause, `${name}: the condition names the cause`);
  const event = await eventually(`${name}: a Warning Event ${reason}`, 60_000 - seenAfter, async () => (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .find((e) => e.involvedObject.name === name && e.type === 'Warning' && e.reason === reason));
  assert.match(event.message ?? '', cause, `${name}: the Event names the cause`);
  return seenAfter;
}

test('the seed article\'s manifest (etcd 3.2.13) is refused at admission naming the oldest version and what to use; corrected, the cluster comes up', async (t) => {
  const bed = await testbed(t, 'seed');
  const operator = startOperator(t, bed.namespace);
  const refused = apply(bed.namespace, SEED_MANIFEST);
  assert.ok(!refused.ok, 'refused');
  t.diagnostic(refused.output.trim());
  assert.match(refused.output, /spec\.version: Invalid value.*etcd 3\.2\.13 is not supported: the oldest version the operator runs is 3\.5\.0.*use 3\.5\.35/);
  const applied = apply(bed.namespace, SEED_MANIFEST.replace('3.2.13', '3.5.35'));
  assert.ok(applied.ok, applied.output);
  await eventually('3 members', 180_000, () => bed.settledMembers('example-etcd-cluster', 3));
  const degraded = (await bed.get('example-etcd-cluster')).status?.conditions?.find((c) => c.type === 'Degraded');
  assert.deepEqual([degraded?.status, degraded?.message], ['False', 'all 3 members ready']);
  operator.succeeded();
});

/**
 * Specs admission lets through that cannot run, what each must be reported as, and the fix (a merge patch of
 * the spec: null removes a field). A crash loop has none here: its pod ran, so the operator leaves it to a
 * person (the README says how).
 */
const faults: { name: string; spec: ClusterSpec; reason: string; cause: RegExp; fix?: Record<string, unknown> }[] = [
  {
    name: 'no-image', spec: { size: 1, repository: 'registry.invalid/etcd' }, reason: 'ImagePullFailed',
    cause: /member pod no-image-[0-9a-f]{8} cannot pull image registry\.invalid\/etcd:v3\.5\.35 .*check both/, fix: { repository: 'quay.io/coreos/etcd' },
  },
  {
    name: 'no-node', spec: { size: 1, pod: { nodeSelector: { 'example.com/disk': 'none' } } }, reason: 'Unschedulable',
    cause: /member pod no-node-[0-9a-f]{8} cannot be scheduled: 0\/3 nodes are available.*node affinity\/selector.*Check spec\.pod nodeSelector/, fix: { pod: { nodeSelector: null } },
  },
  {
    name: 'crashing', spec: { size: 1, pod: { etcdEnv: [{ name: 'ETCD_QUOTA_BACKEND_BYTES', value: 'lots' }] } }, reason: 'CrashLooping',
    cause: /container etcd of member pod crashing-[0-9a-f]{8} keeps failing \(restarted \d+ times; last exit code [1-9]\d*.*see kubectl logs -n \S+ crashing-[0-9a-f]{8} -c etcd --previous/,
  },
  {
    name: 'no-priority', spec: { size: 1, pod: { priorityClassName: 'no-such-class' } }, reason: 'Refused',
    cause: /^Bootstrap: the API server refused it: POST .*pods: HTTP 403: .*no PriorityClass with name no-such-class was found/, fix: { pod: { priorityClassName: null } },
  },
  {
    name: 'bad-context', spec: { size: 1, pod: { securityContext: { runAsUser: -1 } } }, reason: 'Refused',
    cause: /^Bootstrap: the API server refused it: POST .*pods: HTTP 422: .*runAsUser/, fix: { pod: { securityContext: null } },
  },
];

test('a member pod that cannot pull its image, be scheduled or stay up, or that the API server refuses: Degraded names the pod and the cause within 60 s, with a Warning Event; fixed, the cluster comes up', async (t) => {
  const bed = await testbed(t, 'truth');
  const operator = startOperator(t, bed.namespace);
  const timings: string[] = [];
  await Promise.all(faults.map(async (f) => {
    const since = Date.now();
    await bed.create(f.name, f.spec);
    timings.push(`${f.reason} ${await reported(bed, f.name, f.reason, f.cause, since)} ms`);
    const cluster: EtcdCluster = await bed.get(f.name);
    assert.equal(cluster.status?.readyMembers ?? 0, 0, `${f.name}: not reported ready`);
    // Reported, and nothing else done about it: no pod, member or claim removed.
    const removals = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
      .filter((e) => e.involvedObject.name === f.name && ['DeletePod', 'RemoveMember', 'DeleteClaim'].includes(e.reason ?? ''));
    assert.deepEqual(removals.map((e) => e.message), [], `${f.name}: nothing removed`);
    if (!f.fix) return;
    await bed.transport.call('PATCH', `${bed.path}/${f.name}`, { spec: f.fix }, 'application/merge-patch+json');
    await eventually(`${f.name}: up once fixed`, 180_000, () => bed.settledMembers(f.name, 1));
  }));
  t.diagnostic(`reported after: ${timings.join(', ')}`);
  operator.succeeded();
});
