import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1Service } from '@kubernetes/client-node';
import { ApiTransport } from '../../src/runtime/transport.js';
import { Reflector } from '../../src/runtime/reflector.js';
import { adminKubeConfig, eventually, testNamespace } from '../support/lab.js';
import { apiRelay, watches } from '../support/api-relay.js';
import { operatorKubeconfig } from '../support/operator-identity.js';

test('a watch gone silent (its answers held back, its connection open) is noticed within seconds and the collection listed anew', async (t) => {
  const namespace = await testNamespace(t, 'stall');
  const relay = await apiRelay(t);
  const kc = new KubeConfig();
  kc.loadFromFile(operatorKubeconfig(t, namespace, relay.url));
  const transport = new ApiTransport(kubeConfigCredentials(kc));
  // The reflector's defaults, as the operator runs it.
  const reflector = new Reflector<V1Service>(transport, { path: `/api/v1/namespaces/${namespace}/services` });
  const stop = new AbortController();
  const running = reflector.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
    transport.agent.destroy();
  });
  assert.equal(await reflector.waitForSync(stop.signal), true);

  relay.stall(watches('services'));
  const stalledAt = Date.now();
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedService({ namespace, body: { metadata: { name: 'made-during-stall' }, spec: { ports: [{ port: 80 }] } } });
  // The watch times out on the server within 30 s, with a bookmark 2 s before; 5 s of silence past that is a stall.
  // Meanwhile the cache is not known current, and says for how long (the operator's liveness reads it).
  let stalest = 0;
  await eventually('the Service in the cache', 40_000, () => {
    stalest = Math.max(stalest, reflector.staleForMs());
    return Promise.resolve(reflector.store.get(namespace, 'made-during-stall') ? true : undefined);
  });
  const seenMs = Date.now() - stalledAt;
  t.diagnostic(`seen ${seenMs} ms after the watch went silent; stalls ${reflector.stalls}, lists ${reflector.lists}; not known current for up to ${Math.round(stalest)} ms`);
  assert.ok(reflector.stalls >= 1, 'the silent watch was found stalled');
  assert.ok(reflector.lists >= 2, 'and the collection listed anew');
  assert.ok(stalest >= 15_000, `the silence counted as staleness (${Math.round(stalest)} ms)`);
  assert.ok(reflector.staleForMs() < 5000, 'current again once listed');
});
