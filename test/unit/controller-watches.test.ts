import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/runtime/log.js';
import { Controller, generationChanged } from '../../src/runtime/controller.js';
import type { ResourceHandler } from '../../src/runtime/reflector.js';
import { Store } from '../../src/runtime/store.js';
import type { KubeObject } from '../../src/runtime/store.js';
import type { V1Pod } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { ANNOTATION_RESTORED_BY } from '../../src/k8s/labels.js';
import { restoreKeysOf } from '../../src/controllers/restore/reconciler.js';
import { readinessChanged } from '../../src/controllers/cluster/views.js';

const object = (generation: number, status: string): KubeObject & { status: string } =>
  ({ metadata: { name: 'c', namespace: 'ns', generation, resourceVersion: status }, status });

test('with generationChanged, a status-only update does not re-trigger the controller; a spec change does', () => {
  let handler: ResourceHandler<KubeObject & { status: string }> | undefined;
  const source = { on: (h: ResourceHandler<KubeObject & { status: string }>): void => { handler = h; } };
  const controller = new Controller({ name: 't', log: createLogger('silent'), reconcile: () => Promise.resolve(undefined) }).watches(source, generationChanged);
  const registered = handler as ResourceHandler<KubeObject & { status: string }>;
  registered.updated?.(object(1, 'a'), object(1, 'b'));
  assert.equal(controller.queue.length, 0, 'its own status write');
  registered.updated?.(object(1, 'b'), object(2, 'b'));
  assert.equal(controller.queue.length, 1, 'a spec change');
});

test('fansOut: a changed object enqueues every key it concerns, old and new, on the updates that matter only', () => {
  let handler: ResourceHandler<KubeObject & { status: string }> | undefined;
  const source = { on: (h: ResourceHandler<KubeObject & { status: string }>): void => { handler = h; } };
  const controller = new Controller({ name: 't', log: createLogger('silent'), reconcile: () => Promise.resolve(undefined) })
    .fansOut(source, (o) => (o.status === 'none' ? [] : [`ns/${o.status}-1`, `ns/${o.status}-2`]), (old, now) => old.status !== now.status);
  const registered = handler as ResourceHandler<KubeObject & { status: string }>;
  registered.updated?.(object(1, 'a'), object(1, 'a'));
  assert.equal(controller.queue.length, 0, 'an update that does not matter');
  registered.updated?.(object(1, 'a'), object(1, 'b'));
  assert.equal(controller.queue.length, 4, 'both keys of the old and of the new');
  registered.added?.(object(1, 'none'));
  assert.equal(controller.queue.length, 4, 'an object that concerns nobody');
});

test('a member pod or client Service of a restored cluster tells its restore; a pod only as it becomes Ready or stops being', () => {
  const clusters = new Store<EtcdCluster>();
  const cluster = (name: string, namespace: string, restoredBy?: string): EtcdCluster => ({
    apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', spec: { size: 1 },
    metadata: { name, namespace, uid: name, ...(restoredBy ? { annotations: { [ANNOTATION_RESTORED_BY]: restoredBy } } : {}) },
  });
  clusters.upsert(cluster('restored', 'ns', 'again'));
  clusters.upsert(cluster('plain', 'ns'));
  // The same name elsewhere: owner references name an object of the owned one's namespace.
  clusters.upsert(cluster('restored', 'other', 'elsewhere'));
  const owned = (owner: string, controller = true): V1Pod['metadata'] => ({
    name: `${owner}-1`, namespace: 'ns', ownerReferences: [{ apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', name: owner, uid: owner, controller }],
  });
  const pod = (owner: string, ready: boolean): V1Pod => ({ metadata: owned(owner), status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } });
  assert.deepEqual(restoreKeysOf(pod('restored', true), clusters), ['ns/again']);
  assert.deepEqual(restoreKeysOf({ metadata: owned('restored') }, clusters), ['ns/again'], 'its client Service');
  assert.deepEqual(restoreKeysOf(pod('plain', true), clusters), [], 'a cluster no restore made');
  assert.deepEqual(restoreKeysOf(pod('gone', true), clusters), [], 'a cluster not in the cache');
  assert.deepEqual(restoreKeysOf({ metadata: owned('restored', false) }, clusters), [], 'an owner that does not control it');
  assert.equal(readinessChanged(pod('restored', false), pod('restored', true)), true);
  assert.equal(readinessChanged(pod('restored', true), pod('restored', false)), true);
  assert.equal(readinessChanged(pod('restored', true), pod('restored', true)), false, 'a change that leaves it Ready');
});
