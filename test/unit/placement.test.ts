import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { SpreadAttempts, freeNodes, hardPlacement, spreadSituation } from '../../src/controllers/cluster/placement.js';

const node = (name: string, o: { ready?: string; unschedulable?: boolean; labels?: Record<string, string>; taints?: V1Node['spec'] extends infer S ? S extends { taints?: infer T } ? T : never : never } = {}): V1Node => ({
  metadata: { name, labels: o.labels ?? {} },
  spec: { unschedulable: o.unschedulable ?? false, taints: o.taints ?? [] },
  status: { conditions: [{ type: 'Ready', status: o.ready ?? 'True' }] },
});
const podOn = (nodeName: string): V1Pod => ({ metadata: { name: `p-${nodeName}` }, spec: { nodeName, containers: [] } });

test('free nodes: Ready, schedulable, holding no member, matching the nodeSelector, their taints tolerated', () => {
  const nodes = [
    node('used'), node('free'), node('down', { ready: 'Unknown' }), node('cordoned', { unschedulable: true }),
    node('other-disk', { labels: { disk: 'hdd' } }), node('tainted', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }),
    node('soft', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }),
  ];
  assert.deepEqual(freeNodes({ size: 3 }, [podOn('used')], nodes), ['free', 'other-disk', 'soft']);
  assert.deepEqual(freeNodes({ size: 3, pod: { nodeSelector: { disk: 'hdd' } } }, [podOn('used')], nodes), ['other-disk']);
  assert.deepEqual(freeNodes({ size: 3, pod: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] } }, [podOn('used')], nodes), ['free', 'other-disk', 'soft', 'tainted']);
  assert.deepEqual(freeNodes({ size: 3, pod: { affinity: { nodeAffinity: {} } } }, [podOn('used')], nodes), [], 'an explicit affinity is the user\'s placement');
});

test('under antiAffinity, the nodes a member could go to, holding a member or not; no count without that hard rule (issue 32, finding 13)', () => {
  const nodes = [
    node('used'), node('free'), node('down', { ready: 'Unknown' }), node('cordoned', { unschedulable: true }),
    node('other-disk', { labels: { disk: 'hdd' } }), node('tainted', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }),
  ];
  assert.deepEqual(hardPlacement({ size: 5, pod: { antiAffinity: true } }, nodes), ['free', 'other-disk', 'used']);
  assert.deepEqual(hardPlacement({ size: 5, pod: { antiAffinity: true, nodeSelector: { disk: 'hdd' } } }, nodes), ['other-disk']);
  assert.equal(hardPlacement({ size: 5, pod: { spread: 'Required' } }, nodes), undefined, 'a required spread balances members but places any number of them');
  assert.equal(hardPlacement({ size: 5, pod: { antiAffinity: true, affinity: { nodeAffinity: {} } } }, nodes), undefined, 'an explicit affinity replaces antiAffinity: the user\'s placement');
  assert.equal(hardPlacement({ size: 5 }, nodes), undefined);
});

test('a move that came to nothing is not tried again in the same situation for ten minutes; a new situation may try at once', () => {
  const attempts = new SpreadAttempts();
  const crowded = spreadSituation([podOn('a'), podOn('b'), podOn('b')], ['c']);
  assert.equal(attempts.allowed('ns/x', crowded, 0), true);
  attempts.tried('ns/x', crowded, 0);
  assert.equal(attempts.allowed('ns/x', crowded, 9 * 60_000), false);
  assert.equal(attempts.allowed('ns/x', spreadSituation([podOn('a'), podOn('b'), podOn('c')], []), 60_000), true);
  assert.equal(attempts.allowed('ns/x', crowded, 10 * 60_000), true);
  assert.equal(attempts.allowed('ns/y', crowded, 1), true, 'per cluster');
});

test('a move etcd refuses for now is tried again at once, but one refused for a minute in the same situation counts as tried', () => {
  const attempts = new SpreadAttempts();
  const crowded = spreadSituation([podOn('a'), podOn('b'), podOn('b')], ['c']);
  attempts.refused('ns/x', crowded, 0);
  attempts.refused('ns/x', crowded, 30_000);
  assert.equal(attempts.allowed('ns/x', crowded, 30_001), true, 'etcd\'s 5-second "not now" is waited out by trying again');
  attempts.refused('ns/x', crowded, 60_000);
  assert.equal(attempts.allowed('ns/x', crowded, 60_001), false, 'refused for a minute: the cluster settles');
  assert.equal(attempts.allowed('ns/x', crowded, 60_000 + 10 * 60_000), true);
  const other = new SpreadAttempts();
  other.refused('ns/x', crowded, 0);
  other.refused('ns/x', spreadSituation([podOn('a'), podOn('b'), podOn('c')], ['d']), 60_000);
  assert.equal(other.allowed('ns/x', crowded, 60_001), true, 'a new situation starts the minute again');
});
