// spec.pod labels and annotations on running member pods: patched, never restarting, never touching the operator's own keys (issue 33).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { memberPod } from '../../src/k8s/member-pod.js';
import { metadataPatch, podMetadataDigest, specMetadataDigest } from '../../src/k8s/pod-metadata.js';
import type { ClusterSpec } from '../../src/api/etcd-cluster.js';

const spec = (pod: ClusterSpec['pod']): ClusterSpec => ({ size: 3, version: '3.5.17', pod });
const made = (s: ClusterSpec): V1Pod => memberPod({
  address: { cluster: 'example', namespace: 'prod', domain: 'cluster.local', tls: false }, clusterUid: 'uid-1', spec: s, specGeneration: 1,
  member: 'example-0a1b2c3d', version: '3.5.17', state: 'new', initialCluster: 'x', token: 'uid-1', withClaim: false, bootstrapMembers: ['example-0a1b2c3d'],
  operator: { image: 'etcd-operator:dev', corruptCheckSeconds: 600 }, expectData: false,
});
/** The pod's metadata, to read and change in place (V1ObjectMeta is a class: not spread). */
function meta(pod: V1Pod): V1ObjectMeta {
  pod.metadata ??= {};
  return pod.metadata;
}
const annotation = (pod: V1Pod, key: string): string | undefined => meta(pod).annotations?.[key];

test('a member pod carries the spec\'s labels and annotations and the record of their keys: as the spec asks, nothing to patch', () => {
  const s = spec({ labels: { team: 'db', tier: 'storage' }, annotations: { note: 'x' } });
  const pod = made(s);
  assert.deepEqual(meta(pod).labels, { team: 'db', tier: 'storage', app: 'etcd', etcd_cluster: 'example' });
  assert.equal(annotation(pod, 'etcd.database.coreos.com/user-labels'), 'team,tier');
  assert.equal(annotation(pod, 'etcd.database.coreos.com/user-annotations'), 'note');
  assert.equal(podMetadataDigest(pod, s), specMetadataDigest(s));
  // No record for none, as on pods of earlier versions.
  const plain = made(spec(undefined));
  assert.equal(annotation(plain, 'etcd.database.coreos.com/user-labels'), undefined);
  assert.equal(podMetadataDigest(plain, spec(undefined)), specMetadataDigest(spec(undefined)));
});

test('a label changed, added or removed in the spec differs, and the patch sets the spec\'s values and removes only the keys the pod records as the user\'s', () => {
  const pod = made(spec({ labels: { team: 'db', tier: 'storage' }, annotations: { note: 'x' } }));
  meta(pod).resourceVersion = '42';
  // Someone else's label on the pod is not the operator's to judge or remove.
  meta(pod).labels = { ...meta(pod).labels, 'other.io/owner': 'them' };
  const now = spec({ labels: { team: 'platform', zone: 'eu' }, annotations: { note: 'x' } });
  assert.notEqual(podMetadataDigest(pod, now), specMetadataDigest(now));
  assert.deepEqual(metadataPatch(pod, now), {
    metadata: {
      resourceVersion: '42',
      labels: { tier: null, team: 'platform', zone: 'eu' },
      annotations: { note: 'x', 'etcd.database.coreos.com/user-labels': 'team,zone', 'etcd.database.coreos.com/user-annotations': 'note' },
    },
  });
  // Every user key gone: the values and the record removed; the operator's labels and annotations are in no patch.
  const none = metadataPatch(pod, spec(undefined));
  assert.deepEqual(none.metadata.labels, { team: null, tier: null });
  assert.deepEqual(none.metadata.annotations, { note: null, 'etcd.database.coreos.com/user-labels': null, 'etcd.database.coreos.com/user-annotations': null });
  assert.ok(podMetadataDigest(pod, spec({ labels: { team: 'db', tier: 'storage' }, annotations: { note: 'x' } })) === specMetadataDigest(spec({ labels: { team: 'db', tier: 'storage' }, annotations: { note: 'x' } })),
    'a label of someone else\'s makes no difference');
});

test('an annotation value changed by hand on the pod is brought back to the spec\'s', () => {
  const s = spec({ annotations: { note: 'x' } });
  const pod = made(s);
  meta(pod).annotations = { ...meta(pod).annotations, note: 'edited' };
  assert.notEqual(podMetadataDigest(pod, s), specMetadataDigest(s));
  assert.equal(metadataPatch(pod, s).metadata.annotations.note, 'x');
});

test('a pod of an earlier version, which records no keys, gets the record; a label it carries that the spec no longer gives is not known to be the user\'s and stays', () => {
  const s = spec({ labels: { team: 'db' } });
  const pod = made(s);
  delete meta(pod).annotations?.['etcd.database.coreos.com/user-labels'];
  meta(pod).labels = { ...meta(pod).labels, gone: 'yes' };
  assert.notEqual(podMetadataDigest(pod, s), specMetadataDigest(s), 'the record is missing');
  const patch = metadataPatch(pod, s, 'abc');
  assert.deepEqual(patch.metadata.labels, { team: 'db' });
  assert.equal(patch.metadata.annotations['etcd.database.coreos.com/user-labels'], 'team');
  assert.equal(patch.metadata.annotations['etcd.database.coreos.com/pod-template'], 'abc', 'the template it was judged on, recorded');
  assert.equal(metadataPatch(pod, s).metadata.annotations['etcd.database.coreos.com/pod-template'], undefined, 'none unless given');
});

test('the operator\'s own keys are never the user\'s: not put on the pod from the spec, never in the record, never patched or removed', () => {
  const s = spec({ labels: { app: 'mine', etcd_cluster: 'x', team: 'db' }, annotations: { 'etcd.database.coreos.com/initial-cluster': 'evil', 'etcd.version': '9.9.9', note: 'x' } });
  const pod = made(s);
  assert.deepEqual(meta(pod).labels, { team: 'db', app: 'etcd', etcd_cluster: 'example' });
  assert.equal(annotation(pod, 'etcd.database.coreos.com/initial-cluster'), 'example-0a1b2c3d');
  assert.equal(annotation(pod, 'etcd.version'), '3.5.17');
  assert.equal(annotation(pod, 'etcd.database.coreos.com/user-annotations'), 'note');
  assert.equal(podMetadataDigest(pod, s), specMetadataDigest(s), 'nothing to patch for keys that are not the user\'s');
  // A record edited to name the operator's keys removes none of them.
  meta(pod).annotations = { ...meta(pod).annotations, 'etcd.database.coreos.com/user-labels': 'team,app,etcd_cluster', 'etcd.database.coreos.com/user-annotations': 'note,etcd.version,etcd.database.coreos.com/config' };
  const patch = metadataPatch(pod, spec(undefined));
  assert.deepEqual(patch.metadata.labels, { team: null });
  assert.deepEqual(Object.keys(patch.metadata.annotations).sort(), ['etcd.database.coreos.com/user-annotations', 'etcd.database.coreos.com/user-labels', 'note']);
});
