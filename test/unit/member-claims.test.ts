import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { claimMarks, recordStarts, sortClaims } from '../../src/controllers/cluster/claims.js';
import { claimBootstrap, claimCluster, claimOwnership, memberClaim, memberStarted, ownedAsPolicySays, removedForMs } from '../../src/k8s/member-claim.js';
import { ANNOTATION_ADOPTED_FROM, ANNOTATION_CLUSTER_UID, ANNOTATION_INITIAL_CLUSTER, ANNOTATION_MEMBER_REMOVED, ANNOTATION_MEMBER_STARTED } from '../../src/k8s/labels.js';
import type { ApiTransport } from '../../src/runtime/transport.js';
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

test('a removed member\'s claim counts its grace period from the removal recorded on it, whenever this process first saw it', () => {
  const removed = claim('gone', { [ANNOTATION_MEMBER_REMOVED]: '2026-11-24T00:00:00Z' });
  assert.equal(removedForMs(removed, Date.parse('2026-11-24T00:05:00Z')), 300_000);
  assert.equal(removedForMs(claim('kept', {}), Date.parse('2026-11-24T00:05:00Z')), 0, 'no removal recorded: none counted');
  assert.equal(removedForMs(removed, Date.parse('2026-11-23T23:00:00Z')), 0, 'a clock behind the record counts nothing, never less');
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
  assert.deepEqual(sorted.retained, [
    { name: 'old', removed: false, incarnation: 'u1', neverRan: false, createdMs: 0 },
    { name: 'removed', removed: true, incarnation: 'u1', neverRan: false, createdMs: 0 },
  ]);
  assert.deepEqual(sortClaims(claims, 'u2', false, false).retained, []);
  // Read in another order (a fresh list against the watch cache), sorted the same: a confirmation picks the same claim.
  assert.deepEqual(sortClaims([...claims].reverse(), 'u2', false, true), sorted);
});

test('an adoption that status does not record yet is finished, not taken for a bootstrap of unknown plan; once recorded, the claim is the cluster\'s', () => {
  const adopted = claim('old', { [ANNOTATION_CLUSTER_UID]: 'u2', [ANNOTATION_ADOPTED_FROM]: 'u1' });
  assert.deepEqual(sortClaims([adopted], 'u2', false, true), { own: [], retained: [{ name: 'old', removed: false, incarnation: 'u1', neverRan: false, createdMs: 0 }] },
    'of the incarnation it came from, as the claims not patched yet');
  assert.deepEqual(sortClaims([adopted], 'u2', true, true), { own: [adopted], retained: [] });
  // A rebuild from backup clears the cluster's claims before it starts afresh: adopted ones are its own then.
  assert.deepEqual(sortClaims([adopted], 'u2', false, false), { own: [adopted], retained: [] });
});

test('a claim is made saying its member never ran on it, and a bootstrap\'s claim names the bootstrap\'s members (issue 32)', () => {
  const founder = memberClaim(address, 'u1', 'ex-1', {}, 'Retain', ['ex-1', 'ex-2']);
  assert.equal(memberStarted(founder), false);
  assert.deepEqual(claimBootstrap(founder), ['ex-1', 'ex-2']);
  assert.equal(claimBootstrap(memberClaim(address, 'u1', 'ex-3', {}, 'Retain')), undefined, 'a member added later: no bootstrap');
  assert.equal(memberStarted(claim('legacy', { [ANNOTATION_CLUSTER_UID]: 'u1' })), undefined, 'an earlier version\'s claim says nothing');
  assert.equal(memberStarted(claim('ran', { [ANNOTATION_MEMBER_STARTED]: 'true' })), true);
});

test('what the cluster\'s own claims say: never run on, set aside, and the bootstrap that made them; a claim of another incarnation says whether it ran and when it was made', () => {
  const made = new Date('2026-11-24T00:00:00Z');
  const own = [
    claim('a', { [ANNOTATION_MEMBER_STARTED]: 'false', [ANNOTATION_INITIAL_CLUSTER]: 'a,b' }),
    claim('b', { [ANNOTATION_MEMBER_STARTED]: 'true', [ANNOTATION_INITIAL_CLUSTER]: 'a,b' }),
    claim('old', { [ANNOTATION_MEMBER_REMOVED]: '2026-11-24T00:00:00Z', [ANNOTATION_INITIAL_CLUSTER]: 'old' }),
    claim('legacy', {}),
  ];
  assert.deepEqual(claimMarks(own), { neverRan: ['a'], started: ['b'], setAside: ['old'], bootstrapMembers: ['a', 'b'] }, 'a set-aside claim\'s bootstrap is not the one under way');
  const empty = claim('p', { [ANNOTATION_CLUSTER_UID]: 'u1', [ANNOTATION_MEMBER_STARTED]: 'false' }, { creationTimestamp: made });
  assert.deepEqual(sortClaims([empty], 'u2', false, true), { own: [], retained: [{ name: 'p', removed: false, incarnation: 'u1', neverRan: true, createdMs: made.getTime() }] },
    'a claim that says its member never ran is retained, marked so');
});

test('a claim is marked started once its member\'s etcd is seen to have run, an earlier version\'s claim too; never twice', async () => {
  const patched: string[] = [];
  const transport = { call: (method: string, path: string, body: unknown) => { patched.push(`${method} ${path} ${JSON.stringify(body)}`); return Promise.resolve({}); } } as unknown as ApiTransport;
  const own = [claim('a', { [ANNOTATION_MEMBER_STARTED]: 'false' }), claim('b', { [ANNOTATION_MEMBER_STARTED]: 'true' }), claim('c', {}), claim('d', { [ANNOTATION_MEMBER_STARTED]: 'false' })];
  assert.deepEqual(await recordStarts(transport, address, own, (m) => m !== 'd'), ['a', 'c']);
  assert.deepEqual(patched, ['a', 'c'].map((n) => `PATCH /api/v1/namespaces/ns/persistentvolumeclaims/${n} {"metadata":{"annotations":{"${ANNOTATION_MEMBER_STARTED}":"true"}}}`));
});
