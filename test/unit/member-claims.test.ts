import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { sortClaims } from '../../src/controllers/cluster/claims.js';
import { claimCluster, claimOwnership, memberClaim, ownedAsPolicySays } from '../../src/k8s/member-claim.js';
import { ANNOTATION_ADOPTED_FROM, ANNOTATION_CLUSTER_UID, ANNOTATION_MEMBER_REMOVED } from '../../src/k8s/labels.js';
import { ownedByCluster } from '../../src/k8s/owner.js';

const address = { cluster: 'ex', namespace: 'ns', domain: 'cluster.local', tls: false };
const claim = (name: string, annotations: Record<string, string>, o: Partial<NonNullable<V1PersistentVolumeClaim['metadata']>> = {}): V1PersistentVolumeClaim =>
  ({ metadata: { name, annotations, ...o } });

test('a member claim is collected with its cluster only under the Delete policy; it always carries its cluster\'s UID', () => {
  const kept = memberClaim(address, 'u1', 'ex-1', {}, 'Retain');
  assert.equal(kept.metadata?.ownerReferences, undefined);
  assert.equal(kept.metadata?.annotations?.[ANNOTATION_CLUSTER_UID], 'u1');
  assert.ok(ownedAsPolicySays(kept, 'u1', 'Retain'));
  assert.ok(!ownedAsPolicySays(kept, 'u1', 'Delete'));
  const collected = memberClaim(address, 'u1', 'ex-1', {}, 'Delete');
  assert.deepEqual(collected.metadata?.ownerReferences?.map((r) => r.uid), ['u1']);
  assert.ok(ownedAsPolicySays(collected, 'u1', 'Delete'));
  assert.ok(!ownedAsPolicySays(collected, 'u1', 'Retain'));
});

test('a claim made before the policy existed belongs to its owner, and is brought to the policy by a merge patch', () => {
  const legacy: V1PersistentVolumeClaim = { metadata: { name: 'ex-1', ownerReferences: [ownedByCluster('ex', 'u1')] } };
  assert.equal(claimCluster(legacy), 'u1');
  assert.ok(!ownedAsPolicySays(legacy, 'u1', 'Retain'));
  assert.deepEqual(claimOwnership(address, 'u1', 'Retain', null),
    { metadata: { annotations: { [ANNOTATION_CLUSTER_UID]: 'u1', [ANNOTATION_ADOPTED_FROM]: null }, ownerReferences: null } });
});

test('claims are sorted into the cluster\'s own and those a deleted cluster of the name left, unless a restore starts from a snapshot', () => {
  const claims = [
    claim('own', { [ANNOTATION_CLUSTER_UID]: 'u2' }),
    claim('old', { [ANNOTATION_CLUSTER_UID]: 'u1' }),
    claim('removed', { [ANNOTATION_CLUSTER_UID]: 'u1', [ANNOTATION_MEMBER_REMOVED]: '2026-11-24T00:00:00Z' }),
    claim('going', { [ANNOTATION_CLUSTER_UID]: 'u1' }, { deletionTimestamp: new Date() }),
  ];
  const sorted = sortClaims(claims, 'u2', false, true);
  assert.deepEqual(sorted.own.map((c) => c.metadata?.name), ['own']);
  assert.deepEqual(sorted.retained, [{ name: 'old', removed: false }, { name: 'removed', removed: true }]);
  assert.deepEqual(sortClaims(claims, 'u2', false, false).retained, []);
});

test('an adoption that status does not record yet is finished, not taken for a bootstrap of unknown plan; once recorded, the claim is the cluster\'s', () => {
  const adopted = claim('old', { [ANNOTATION_CLUSTER_UID]: 'u2', [ANNOTATION_ADOPTED_FROM]: 'u1' });
  assert.deepEqual(sortClaims([adopted], 'u2', false, true), { own: [], retained: [{ name: 'old', removed: false }] });
  assert.deepEqual(sortClaims([adopted], 'u2', true, true), { own: [adopted], retained: [] });
  // A rebuild from backup clears the cluster's claims before it starts afresh: adopted ones are its own then.
  assert.deepEqual(sortClaims([adopted], 'u2', false, false), { own: [adopted], retained: [] });
});
