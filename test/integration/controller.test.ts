import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { ApiTransport } from '../../src/runtime/transport.js';
import { Reflector } from '../../src/runtime/reflector.js';
import { Controller } from '../../src/runtime/controller.js';
import { RuntimeMetrics } from '../../src/runtime/metrics.js';
import { startHealthServer } from '../../src/runtime/health-server.js';
import { createLogger } from '../../src/runtime/log.js';
import type { KubeObject } from '../../src/runtime/store.js';
import { adminKubeConfig, eventually, testNamespace } from '../support/lab.js';
import { WIDGET_GROUP, ensureCrd, widgetCrd } from '../support/test-crd.js';

test('a controller reconciles owners of changed children, retries failures with backoff, and reports metrics', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  await ensureCrd(transport, widgetCrd);
  const namespace = await testNamespace(t, 'controller');
  const widgets = `/apis/${WIDGET_GROUP}/v1/namespaces/${namespace}/widgets`;
  const configMaps = `/api/v1/namespaces/${namespace}/configmaps`;

  const reconciled: string[] = [];
  const logLines: string[] = [];
  let flakyFailuresLeft = 3;
  const metrics = new RuntimeMetrics();
  const widgetReflector = new Reflector<KubeObject>(transport, { path: widgets });
  const configMapReflector = new Reflector<KubeObject>(transport, { path: configMaps });
  const controller = new Controller({
    name: 'widgets', workers: 2, log: createLogger('info', { write: (line: string) => { logLines.push(line); } }),
    queueObserver: metrics.queueObserver('widgets'),
    reconcileObserver: metrics.reconcileObserver('widgets'),
    reconcile: (key) => {
      reconciled.push(key);
      if (key === `${namespace}/flaky` && flakyFailuresLeft-- > 0) return Promise.reject(new Error('not yet'));
      return Promise.resolve(undefined);
    },
  }).watches(widgetReflector).owns(configMapReflector, 'Widget');

  const stop = new AbortController();
  const running = Promise.all([widgetReflector.run(stop.signal), configMapReflector.run(stop.signal), controller.run(stop.signal)]);
  const health = await startHealthServer({
    host: '127.0.0.1', port: 0, registry: metrics.registry,
    ready: () => widgetReflector.hasSynced && configMapReflector.hasSynced, live: () => undefined,
  });
  t.after(async () => {
    stop.abort();
    await running;
    health.close();
    transport.agent.destroy();
  });
  const base = `http://127.0.0.1:${(health.address() as AddressInfo).port}`;
  await Promise.all([widgetReflector.waitForSync(), configMapReflector.waitForSync()]);
  assert.equal((await fetch(`${base}/readyz`)).status, 200);
  assert.equal((await fetch(`${base}/healthz`)).status, 200);

  const parent = (await transport.call('POST', widgets, {
    apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', metadata: { name: 'parent' }, spec: { size: 1 },
  })) as KubeObject;
  await eventually('the parent reconciled', 10_000, () => Promise.resolve(reconciled.includes(`${namespace}/parent`) || undefined));
  reconciled.length = 0;
  await transport.call('POST', configMaps, {
    metadata: {
      name: 'child',
      ownerReferences: [{ apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', name: 'parent', uid: parent.metadata?.uid, controller: true }],
    },
  });
  await eventually('the owner reconciled for its child', 10_000, () => Promise.resolve(reconciled.includes(`${namespace}/parent`) || undefined));
  assert.ok(!reconciled.includes(`${namespace}/child`), 'the child itself is not a key of this controller');

  await transport.call('POST', widgets, { apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', metadata: { name: 'flaky' }, spec: { size: 1 } });
  await eventually('flaky to succeed after three failures', 20_000, () =>
    Promise.resolve(reconciled.filter((k) => k === `${namespace}/flaky`).length >= 4 || undefined));
  assert.equal(controller.queue.failures(`${namespace}/flaky`), 0, 'backoff cleared by the success');
  const failures = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.key === `${namespace}/flaky`);
  assert.equal(failures.length, 3, 'one structured log line per failed reconcile');
  for (const line of failures) {
    assert.equal(line.level, 'error');
    assert.equal(line.controller, 'widgets');
    assert.match(String(line.reconcileId), /^[0-9a-f]{12}$/);
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT/);
  }

  const text = await (await fetch(`${base}/metrics`)).text();
  assert.match(text, /^workqueue_retries_total\{name="widgets"\} 3$/m);
  assert.match(text, /^controller_runtime_reconcile_errors_total\{controller="widgets"\} 3$/m);
  assert.match(text, /^controller_runtime_reconcile_total\{controller="widgets",result="success"\} [1-9]\d*$/m);
  assert.match(text, /^process_resident_memory_bytes \d+/m);
});
