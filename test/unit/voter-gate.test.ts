import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMember } from '../../src/etcd/client.js';
import { gatesToOpen } from '../../src/controllers/cluster/voter-gate.js';
import { VOTER_GATE } from '../../src/k8s/member-pod.js';

const pod = (name: string, o: { gate?: boolean; open?: boolean; deleting?: boolean } = {}): V1Pod => ({
  metadata: { name, namespace: 'ns', ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
  spec: { containers: [], ...(o.gate === false ? {} : { readinessGates: [{ conditionType: VOTER_GATE }] }) },
  status: { conditions: [{ type: 'ContainersReady', status: 'True' }, ...(o.open ? [{ type: VOTER_GATE, status: 'True' }] : [])] },
});
const member = (name: string, o: { learner?: boolean; started?: boolean } = {}): EtcdMember => ({
  id: `id-${name}`, name: o.started === false ? '' : name, peerURLs: [`http://${name}.c.ns.svc:2380`], clientURLs: [], isLearner: o.learner ?? false,
});

test('a pod\'s voter gate opens once etcd lists its member as a started voter, and only then', () => {
  const pods = [pod('voter'), pod('learner'), pod('not-started'), pod('unlisted'), pod('open', { open: true }), pod('old', { gate: false }), pod('going', { deleting: true })];
  const members = [member('voter'), member('learner', { learner: true }), member('not-started', { started: false }), member('open'), member('old'), member('going')];
  assert.deepEqual(gatesToOpen(pods, members).map((p) => p.metadata?.name), ['voter']);
  assert.deepEqual(gatesToOpen(pods, undefined), [], 'no member list: nothing opened');
  assert.deepEqual(gatesToOpen([pod('learner')], [member('learner')]).map((p) => p.metadata?.name), ['learner'], 'promoted: opened');
});
