import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store } from '../../src/runtime/store.js';
import type { KubeObject } from '../../src/runtime/store.js';

const obj = (ns: string, name: string, rv: string, extra: { labels?: Record<string, string>; owner?: string } = {}): KubeObject => ({
  metadata: {
    namespace: ns, name, resourceVersion: rv, labels: extra.labels,
    ownerReferences: extra.owner ? [{ uid: extra.owner, controller: true, kind: 'EtcdCluster', name: 'c', apiVersion: 'v1' }] : undefined,
  },
});

test('store indexes by key, namespace, labels and controller owner', () => {
  const store = new Store<KubeObject>();
  store.upsert(obj('a', 'p1', '1', { labels: { app: 'etcd', cluster: 'x' }, owner: 'u1' }));
  store.upsert(obj('a', 'p2', '2', { labels: { app: 'etcd', cluster: 'y' }, owner: 'u2' }));
  store.upsert(obj('b', 'p1', '3', { labels: { app: 'etcd', cluster: 'x' }, owner: 'u1' }));
  assert.equal(store.get('a', 'p1')?.metadata?.resourceVersion, '1');
  assert.equal(store.list('a').length, 2);
  assert.deepEqual(store.withLabels({ cluster: 'x' }).map((o) => o.metadata?.namespace).sort(), ['a', 'b']);
  assert.deepEqual(store.withLabels({ cluster: 'x' }, 'b').length, 1);
  assert.deepEqual(store.ownedBy('u1').length, 2);

  store.upsert(obj('a', 'p1', '4', { owner: 'u2' }));
  assert.equal(store.ownedBy('u1').length, 1, 'an owner change moves the object between index entries');
  assert.equal(store.ownedBy('u2').length, 2);
  store.remove(obj('a', 'p2', '5'));
  assert.equal(store.list('a').length, 1);
  assert.equal(store.ownedBy('u2').length, 1);
  assert.equal(store.remove(obj('a', 'missing', '6')), undefined);
});

test('replace reports adds, changed versions and vanished objects', () => {
  const store = new Store<KubeObject>();
  store.replace([obj('n', 'keep', '1'), obj('n', 'change', '2'), obj('n', 'gone', '3')]);
  const changes = store.replace([obj('n', 'keep', '1'), obj('n', 'change', '9'), obj('n', 'new', '10')]);
  assert.deepEqual(changes.added.map((o) => o.metadata?.name), ['new']);
  assert.deepEqual(changes.updated.map((u) => [u.old.metadata?.resourceVersion, u.current.metadata?.resourceVersion]), [['2', '9']]);
  assert.deepEqual(changes.deleted.map((o) => o.metadata?.name), ['gone']);
  assert.equal(store.size, 3);
  assert.equal(store.list('n').length, 3);
});
