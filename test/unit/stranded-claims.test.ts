import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { pinnedNode, strandedClaims } from '../../src/controllers/cluster/stranded-claims.js';
import { nodeState } from '../../src/k8s/node-state.js';

const volume = (terms: { key: string; values: string[] }[][]): V1PersistentVolume => ({
  spec: { nodeAffinity: { required: { nodeSelectorTerms: terms.map((t) => ({ matchExpressions: t.map((e) => ({ ...e, operator: 'In' })) })) } } },
});
const node = (name: string, ready: boolean, taints: string[] = []): V1Node => ({
  metadata: { name }, spec: { taints: taints.map((key) => ({ key, effect: 'NoExecute' })) }, status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'Unknown' }] },
});
const claim = (name: string, volumeName?: string): V1PersistentVolumeClaim => ({ metadata: { name }, spec: volumeName ? { volumeName } : {} });
const OUT = 'node.kubernetes.io/out-of-service';

test('a volume is pinned to a node only when its affinity allows that one host', () => {
  assert.equal(pinnedNode(volume([[{ key: 'kubernetes.io/hostname', values: ['n1'] }]])), 'n1', 'local-path, local PVs');
  assert.equal(pinnedNode(volume([[{ key: 'topology.kubernetes.io/zone', values: ['a'] }]])), undefined, 'a zonal disk attaches to any node of its zone');
  assert.equal(pinnedNode(volume([[{ key: 'kubernetes.io/hostname', values: ['n1', 'n2'] }]])), undefined);
  assert.equal(pinnedNode(volume([[{ key: 'kubernetes.io/hostname', values: ['n1'] }], [{ key: 'kubernetes.io/hostname', values: ['n2'] }]])), undefined, 'terms are ORed');
  assert.equal(pinnedNode({ spec: {} }), undefined, 'a network volume');
});

test('a node is shut down only by a person\'s word on a node that does not report', () => {
  assert.equal(nodeState(node('n', false, [OUT])).shutDown, true);
  assert.equal(nodeState(node('n', false)).shutDown, false, 'lost is not gone: it may be cut off, its members running');
  assert.equal(nodeState(node('n', true, [OUT])).shutDown, false, 'a kubelet that reports still holds its volumes');
});

test('claims on a node declared shut down are stranded; nothing is read while no node is', async () => {
  const nodes = new Map([['n1', node('n1', true)], ['n2', node('n2', false, [OUT])], ['n3', node('n3', false)]]);
  const volumes = new Map([['pv-a', volume([[{ key: 'kubernetes.io/hostname', values: ['n1'] }]])], ['pv-b', volume([[{ key: 'kubernetes.io/hostname', values: ['n2'] }]])],
    ['pv-c', volume([[{ key: 'kubernetes.io/hostname', values: ['n3'] }]])], ['pv-d', volume([[{ key: 'topology.kubernetes.io/zone', values: ['b'] }]])]]);
  const reads: string[] = [];
  const readNode = (n: string): Promise<V1Node | undefined> => { reads.push(n); return Promise.resolve(nodes.get(n)); };
  const readVolume = (v: string): Promise<V1PersistentVolume | undefined> => { reads.push(v); return Promise.resolve(volumes.get(v)); };
  const claims = [claim('a', 'pv-a'), claim('b', 'pv-b'), claim('c', 'pv-c'), claim('d', 'pv-d'), claim('pending')];
  assert.deepEqual(await strandedClaims(claims, true, readNode, readVolume), ['b']);
  reads.length = 0;
  assert.deepEqual(await strandedClaims(claims, false, readNode, readVolume), []);
  assert.deepEqual(reads, [], 'no request while no node is declared shut down');
});
