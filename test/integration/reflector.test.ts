// lab: exclusive — the API server restarted.
import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { ApiTransport } from '../../src/runtime/transport.js';
import { Reflector } from '../../src/runtime/reflector.js';
import { adminKubeConfig, eventually, restartApiServer, testNamespace } from '../support/lab.js';

interface Seen { added: Set<string>; deleted: Set<string>; updates: number }

function watchConfigMaps(transport: ApiTransport, namespace: string): { reflector: Reflector<V1ConfigMap>; seen: Seen } {
  const seen: Seen = { added: new Set(), deleted: new Set(), updates: 0 };
  const reflector = new Reflector<V1ConfigMap>(transport, { path: `/api/v1/namespaces/${namespace}/configmaps`, pageSize: 3 })
    .on({
      added: (o) => seen.added.add(o.metadata?.name ?? ''),
      updated: () => seen.updates++,
      deleted: (o) => seen.deleted.add(o.metadata?.name ?? ''),
    });
  return { reflector, seen };
}

/** The store holds exactly what a fresh list returns, at the same resourceVersions. */
async function cacheEqualsFreshList(core: CoreV1Api, reflector: Reflector<V1ConfigMap>, namespace: string): Promise<true | undefined> {
  const fresh = await core.listNamespacedConfigMap({ namespace });
  const want = fresh.items.map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`).sort();
  const have = reflector.store.list(namespace).map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`).sort();
  return JSON.stringify(want) === JSON.stringify(have) ? true : undefined;
}

const cm = (name: string, value: string): V1ConfigMap => ({ metadata: { name }, data: { value } });

/** A namespace seeded with config maps and a running, synced reflector over them; pause() and resume() it. */
async function configMapWatch(t: TestContext, prefix: string, seed: string[]) {
  const kc = adminKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = await testNamespace(t, prefix);
  for (const name of seed) await core.createNamespacedConfigMap({ namespace, body: cm(name, 'x') });
  const transport = new ApiTransport(kubeConfigCredentials(kc));
  const { reflector, seen } = watchConfigMaps(transport, namespace);
  let stop = new AbortController();
  let running = Promise.resolve();
  const pause = async (): Promise<void> => {
    stop.abort();
    await running;
  };
  const resume = (): void => {
    stop = new AbortController();
    running = reflector.run(stop.signal);
  };
  t.after(async () => {
    await pause();
    transport.agent.destroy();
  });
  resume();
  await reflector.waitForSync();
  return { core, namespace, transport, reflector, seen, pause, resume };
}

test('a watch cut mid-stream resumes from its resourceVersion and loses no event', async (t) => {
  const { core, namespace, transport, reflector, seen } = await configMapWatch(t, 'watchcut', [0, 1, 2, 3, 4].map((i) => `before-${i}`));
  assert.equal(reflector.store.list(namespace).length, 6, 'five config maps and kube-root-ca.crt, listed in pages of 3');

  // Cut every connection the reflector holds, then change things while it reconnects.
  for (const sockets of Object.values(transport.agent.sockets)) for (const s of sockets ?? []) s.destroy();
  for (let i = 0; i < 10; i++) await core.createNamespacedConfigMap({ namespace, body: cm(`during-${i}`, 'x') });
  for (let i = 0; i < 5; i++) await core.replaceNamespacedConfigMap({ name: `before-${i}`, namespace, body: cm(`before-${i}`, 'changed') });
  for (let i = 0; i < 3; i++) await core.deleteNamespacedConfigMap({ name: `during-${i}`, namespace });

  await eventually('cache equal to a fresh list', 30_000, () => cacheEqualsFreshList(core, reflector, namespace));
  for (let i = 0; i < 10; i++) assert.ok(seen.added.has(`during-${i}`), `add of during-${i} delivered`);
  for (let i = 0; i < 3; i++) assert.ok(seen.deleted.has(`during-${i}`), `delete of during-${i} delivered`);
  assert.ok(seen.updates >= 5, `updates delivered (${seen.updates})`);
  assert.equal(reflector.lists, 1, 'resumed from the last resourceVersion, no relist');
});

test('after the API server restarts, an expired resourceVersion relists and delivers deletes missed meanwhile', async (t) => {
  const { core, namespace, reflector, seen, pause, resume } = await configMapWatch(t, 'relist', [0, 1, 2, 3].map((i) => `old-${i}`));

  // The reflector is away while objects vanish and appear, and the API server restarts (new watch cache).
  await pause();
  for (let i = 0; i < 4; i++) await core.deleteNamespacedConfigMap({ name: `old-${i}`, namespace });
  await core.createNamespacedConfigMap({ namespace, body: cm('new-0', 'x') });
  await restartApiServer();

  resume();
  await eventually('cache equal to a fresh list', 60_000, () => cacheEqualsFreshList(core, reflector, namespace));
  for (let i = 0; i < 4; i++) assert.ok(seen.deleted.has(`old-${i}`), `missed delete of old-${i} delivered`);
  assert.ok(seen.added.has('new-0'));
  assert.equal(reflector.lists, 2, 'the expired resourceVersion caused exactly one relist');
});
