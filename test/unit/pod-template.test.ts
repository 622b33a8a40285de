// The pod template digest (what spec.pod gives a member pod that takes a new pod to change), and how a pod of
// an earlier operator version, which records none, is judged: an operator upgrade rolls nothing (issue 33).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { memberPod } from '../../src/k8s/member-pod.js';
import type { MemberPodInput } from '../../src/k8s/member-pod.js';
import { podTemplateDigest } from '../../src/k8s/pod-template.js';
import { templateOnPod } from '../../src/k8s/template-on-pod.js';
import { clusterState } from '../../src/controllers/cluster/views.js';
import type { Observed } from '../../src/controllers/cluster/views.js';
import { plan } from '../../src/etcd/planner.js';
import type { Action } from '../../src/etcd/planner.js';
import { metadataPatch } from '../../src/k8s/pod-metadata.js';
import type { ClusterSpec, EtcdCluster } from '../../src/api/etcd-cluster.js';
import type { ClusterAddress } from '../../src/etcd/identity.js';
import { peerUrl } from '../../src/etcd/identity.js';

const address: ClusterAddress = { cluster: 'example', namespace: 'prod', domain: 'cluster.local', tls: false };
const BASE: ClusterSpec = { size: 3, version: '3.5.17', repository: 'quay.io/coreos/etcd' };
const TEMPLATE = 'etcd.database.coreos.com/pod-template';

const made = (spec: ClusterSpec, o: Partial<MemberPodInput> = {}): V1Pod => memberPod({
  address, clusterUid: 'uid-1', spec, specGeneration: 1, member: 'example-0a1b2c3d', version: '3.5.17', state: 'existing', initialCluster: 'x',
  token: 'uid-1', withClaim: true, operator: { image: 'etcd-operator:dev', corruptCheckSeconds: 600 }, expectData: false, ...o,
});

/** A member pod as an operator version before the record made it: no pod template and no record of the user's keys. */
function earlier(spec: ClusterSpec, o: Partial<MemberPodInput> = {}): V1Pod {
  const pod = structuredClone(made(spec, o));
  for (const key of [TEMPLATE, 'etcd.database.coreos.com/user-labels', 'etcd.database.coreos.com/user-annotations']) delete pod.metadata?.annotations?.[key];
  return pod;
}

const digest = (pod: ClusterSpec['pod']): string => podTemplateDigest({ ...BASE, ...(pod ? { pod } : {}) }, 'example');

test('the pod template digest changes with each field of spec.pod that goes into the pod and takes a new pod to change', () => {
  const plain = digest(undefined);
  const changes: Record<string, ClusterSpec['pod']> = {
    'resources.limits': { resources: { limits: { memory: '1Gi' } } },
    'resources.requests': { resources: { requests: { cpu: '500m' } } },
    etcdEnv: { etcdEnv: [{ name: 'ETCD_SNAPSHOT_COUNT', value: '5000' }] },
    affinity: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }] } } } },
    antiAffinity: { antiAffinity: true },
    spread: { spread: 'Required' },
    tolerations: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'etcd', effect: 'NoSchedule' }] },
    nodeSelector: { nodeSelector: { disk: 'ssd' } },
    priorityClassName: { priorityClassName: 'system-cluster-critical' },
    securityContext: { securityContext: { runAsUser: 1000, fsGroup: 1000 } },
  };
  const digests = Object.entries(changes).map(([field, pod]) => {
    const changed = digest(pod);
    assert.notEqual(changed, plain, field);
    return changed;
  });
  assert.equal(new Set(digests).size, digests.length, 'each change is told apart');
  assert.notEqual(digest({ resources: { limits: { memory: '1Gi' } } }), digest({ resources: { limits: { memory: '2Gi' } } }), 'a value changed');
});

test('labels, annotations, the claim spec, unused CoreOS fields and what the spec gives outside spec.pod leave the pod template digest as it is', () => {
  const plain = digest(undefined);
  assert.equal(digest({ labels: { team: 'db' }, annotations: { note: 'x' } }), plain, 'patched onto running pods instead');
  assert.equal(digest({ persistentVolumeClaimSpec: { resources: { requests: { storage: '1Gi' } } } }), plain, 'the claim\'s, not the pod\'s');
  assert.equal(digest({ busyboxImage: 'busybox', DNSTimeoutInSecond: 10 }), plain);
  assert.equal(podTemplateDigest({ ...BASE, version: '3.6.5', quotaBackendBytes: 2 ** 30, size: 5 }, 'example'), plain, 'versions and settings roll by their own record');
  // The spread is the placement only without an explicit affinity.
  const affinity = { nodeAffinity: {} };
  assert.equal(digest({ affinity, spread: 'Required' }), digest({ affinity }));
});

test('the pod template digest is of what the operator renders: an integer quantity reads as its string, and key order does not count', () => {
  assert.equal(digest({ resources: { limits: { cpu: 1 } } }), digest({ resources: { limits: { cpu: '1' } } }));
  assert.equal(digest({ nodeSelector: { a: '1', b: '2' } }), digest({ nodeSelector: { b: '2', a: '1' } }));
  assert.equal(digest({ securityContext: { runAsUser: 1, fsGroup: 2 } }), digest({ securityContext: { fsGroup: 2, runAsUser: 1 } }));
});

test('a member pod records the template it is made with, the one the spec asks for', () => {
  const spec = { ...BASE, pod: { resources: { requests: { cpu: '100m' } }, tolerations: [{ key: 'k', operator: 'Exists' }] } };
  const pod = made(spec);
  assert.equal(pod.metadata?.annotations?.[TEMPLATE], podTemplateDigest(spec, 'example'));
  assert.deepEqual(templateOnPod(pod, spec, 'example', 7), { digest: podTemplateDigest(spec, 'example'), recorded: true }, 'read from the record, whatever the generation');
  assert.deepEqual([pod.spec?.containers[0]?.resources?.requests, pod.spec?.tolerations], [{ cpu: '100m' }, [{ key: 'k', operator: 'Exists' }]]);
});

const judged = (pod: V1Pod, spec: ClusterSpec, generation: number): string => templateOnPod(pod, spec, 'example', generation).digest;

test('a pod of an earlier version, made from the current generation of the spec, is on the spec\'s template: it is not rolled', () => {
  const spec = { ...BASE, pod: { resources: { limits: { memory: '1Gi' } } } };
  const pod = earlier(spec, { specGeneration: 4 });
  assert.deepEqual(templateOnPod(pod, spec, 'example', 4), { digest: podTemplateDigest(spec, 'example'), recorded: false });
  // Whatever the API server did to it: only its generation is read.
  assert.ok(pod.spec);
  pod.spec.containers = [];
  pod.spec.tolerations = [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }];
  assert.equal(judged(pod, spec, 4), podTemplateDigest(spec, 'example'));
});

test('a pod of an earlier version made from an older generation is on the spec\'s template if it carries all of it, whatever Kubernetes added or rewrote', () => {
  const spec: ClusterSpec = {
    ...BASE,
    pod: {
      resources: { limits: { cpu: '1000m', memory: '1024Mi' }, requests: { cpu: '0.5' } },
      etcdEnv: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }, { name: 'ETCD_SNAPSHOT_COUNT', value: '5000' }],
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'etcd', effect: 'NoSchedule' }],
      nodeSelector: { disk: 'ssd' }, securityContext: { runAsUser: 1000 },
    },
  };
  const target = podTemplateDigest(spec, 'example');
  const pod = earlier(spec);
  assert.equal(judged(pod, spec, 3), target);
  // As the API server returns it: quantities canonical, defaults filled in, tolerations and a default PriorityClass added by admission.
  const etcd = pod.spec?.containers[0];
  assert.ok(etcd && pod.spec);
  etcd.resources = { limits: { cpu: '1', memory: '1Gi', 'ephemeral-storage': '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } };
  etcd.env = [{ name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } }, { name: 'ETCD_SNAPSHOT_COUNT', value: '5000' }];
  pod.spec.tolerations = [...pod.spec.tolerations ?? [], { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }];
  pod.spec.priorityClassName = 'cluster-default';
  pod.spec.securityContext = Object.assign({}, pod.spec.securityContext, { seLinuxOptions: { level: 's0:c123,c456' } });
  assert.equal(judged(pod, spec, 3), target);
});

test('a pod of an earlier version made from an older generation is not on the spec\'s template when the spec changed a value it carries, or added one: it rolls', () => {
  const before: ClusterSpec = { ...BASE, pod: { resources: { limits: { memory: '1Gi' } }, etcdEnv: [{ name: 'ETCD_SNAPSHOT_COUNT', value: '5000' }], nodeSelector: { disk: 'ssd' } } };
  const pod = earlier(before);
  const after = (pod: ClusterSpec['pod']): ClusterSpec => ({ ...before, pod: { ...before.pod, ...pod } });
  for (const [what, spec] of Object.entries({
    'a memory limit raised': after({ resources: { limits: { memory: '2Gi' } } }),
    'a request added': after({ resources: { limits: { memory: '1Gi' }, requests: { cpu: '100m' } } }),
    'an env value changed': after({ etcdEnv: [{ name: 'ETCD_SNAPSHOT_COUNT', value: '10000' }] }),
    'a toleration added': after({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }),
    'a node selector changed': after({ nodeSelector: { disk: 'nvme' } }),
    'a priority class set': after({ priorityClassName: 'high' }),
    'a security context set': after({ securityContext: { runAsUser: 1000 } }),
    'an affinity set': after({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'a', operator: 'Exists' }] } }] } } }),
    'the spread made a rule': after({ spread: 'Required' }),
  })) assert.equal(judged(pod, spec, 3), '', what);
});

test('a pod of an earlier version, which ran etcd as root (no security context), is not on the "restricted" template: it rolls', () => {
  const spec = { ...BASE, pod: { nodeSelector: { disk: 'ssd' } } };
  const root = earlier(spec);
  assert.ok(root.spec);
  delete root.spec.securityContext;
  assert.equal(judged(root, spec, 3), '');
});

test('what cannot be read back is not judged: a pod made before spread constraints existed, and a value removed from the spec before the upgrade', () => {
  const spec = { ...BASE, pod: { tolerations: [{ key: 'a', operator: 'Exists' as const }] } };
  const beforeSpread = earlier(spec);
  delete beforeSpread.spec?.topologySpreadConstraints;
  assert.equal(judged(beforeSpread, spec, 3), podTemplateDigest(spec, 'example'), 'no roll of every pod made before issue 18');
  const removed = earlier({ ...BASE, pod: { tolerations: [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }] } });
  assert.equal(judged(removed, spec, 3), podTemplateDigest(spec, 'example'), 'indistinguishable from one admission added: kept until the next change rolls it');
});

/** A healthy cluster of three members whose pods are given, each answering, a leading. */
function observed(pods: V1Pod[]): Observed {
  const names = pods.map((p) => p.metadata?.name ?? '');
  return {
    pods, nodes: new Map(), claims: names, strandedClaims: [], claimMarks: { neverRan: [], started: names, setAside: [] }, retained: [], alarms: [],
    members: names.map((n) => ({ id: `id-${n}`, name: n, peerURLs: [peerUrl(address, n)], clientURLs: [], isLearner: false })),
    statuses: new Map(names.map((n) => [n, { memberId: `id-${n}`, leaderId: `id-${names[0] ?? ''}`, raftIndex: 10, raftTerm: 2, revision: 5, dbSize: 100, dbSizeInUse: 90, version: '3.5.17', isLearner: false, errors: [], storageVersion: '', downgradeTarget: '' }])),
  };
}
function running(pod: V1Pod): V1Pod {
  pod.status = { phase: 'Running', conditions: [{ type: 'ContainersReady', status: 'True' }, { type: 'Ready', status: 'True' }] };
  return pod;
}
const SETTINGS = { replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, claimGraceMs: 600_000, learnerMaxLag: 100, stuckStoppingAfterMs: 300_000, stalledAfterMs: 600_000 };
const TIMINGS = { silentForMs: {}, strandedForMs: {}, unclaimedForMs: {}, stoppingForMs: {}, stalledForMs: {} };

/** A JSON merge patch of metadata applied to the pod as the API server would: null removes a key. */
function applyPatch(pod: V1Pod, patch: ReturnType<typeof metadataPatch>): void {
  const merge = (was: Record<string, string> | undefined, change: Record<string, string | null>): Record<string, string> =>
    Object.fromEntries(Object.entries({ ...was, ...change }).filter((e): e is [string, string] => e[1] !== null));
  pod.metadata ??= {};
  pod.metadata.labels = merge(pod.metadata.labels, patch.metadata.labels);
  pod.metadata.annotations = merge(pod.metadata.annotations, patch.metadata.annotations);
}

/** The actions planned pass after pass, each metadata patch applied, up to the first other action. */
function passes(cluster: EtcdCluster, pods: V1Pod[]): Action[] {
  const actions: Action[] = [];
  for (let i = 0; i < 10; i++) {
    const action = plan(clusterState(cluster, observed(pods), SETTINGS, TIMINGS));
    actions.push(action);
    if (action.type !== 'PatchPodMetadata') return actions;
    const pod = pods.find((p) => p.metadata?.name === action.member);
    assert.ok(pod);
    applyPatch(pod, metadataPatch(pod, cluster.spec, action.recordTemplate));
  }
  return actions;
}

test('an operator upgrade rolls no member: pods of the earlier version get the record by a patch each, then the cluster is steady (issue 33)', () => {
  const spec: ClusterSpec = { ...BASE, pod: { labels: { team: 'db' }, resources: { limits: { memory: '1Gi' } }, persistentVolumeClaimSpec: { resources: { requests: { storage: '1Gi' } } } } };
  const cluster: EtcdCluster = { apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdCluster', metadata: { name: 'example', namespace: 'prod', uid: 'uid-1', generation: 5 }, spec, status: { bootstrapped: true } };
  // Made at generations 1 to 3 (the spec's size changed since), by an operator that recorded neither the template nor the user's keys.
  const pods = (): V1Pod[] => ['a', 'b', 'c'].map((n, i) => running(earlier(spec, { member: `example-${n}`, specGeneration: i + 1 })));
  const upgraded = passes(cluster, pods());
  assert.deepEqual(upgraded.map((a) => [a.type, 'member' in a ? a.member : '', 'recordTemplate' in a ? a.recordTemplate : '']), [
    ...['a', 'b', 'c'].map((n) => ['PatchPodMetadata', `example-${n}`, podTemplateDigest(spec, 'example')]), ['Steady', '', ''],
  ]);
  // A change of spec.pod the earlier version never applied still reaches its pods: their labels recorded first, restarting nothing, then the roll.
  const raised = { ...cluster, spec: { ...spec, pod: { ...spec.pod, resources: { limits: { memory: '2Gi' } } } } };
  const rolling = passes(raised, pods());
  assert.deepEqual(rolling.map((a) => a.type), ['PatchPodMetadata', 'PatchPodMetadata', 'PatchPodMetadata', 'DeletePod']);
  assert.ok(rolling.every((a) => !('recordTemplate' in a)), 'judged on another template: no record of the spec\'s');
});
