import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import { ApiTransport } from '../../src/runtime/transport.js';
import { EventRecorder } from '../../src/runtime/events.js';
import type { InvolvedObject } from '../../src/runtime/events.js';
import { adminKubeConfig, testNamespace } from '../support/lab.js';

async function involved(core: CoreV1Api, namespace: string, name: string): Promise<InvolvedObject> {
  const cm = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name } } });
  return { apiVersion: 'v1', kind: 'ConfigMap', name, namespace, uid: cm.metadata?.uid ?? '' };
}

test('repeated events aggregate into one Event with a count, and a hot loop is throttled per object', async (t) => {
  const kc = adminKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const transport = new ApiTransport(kubeConfigCredentials(kc));
  t.after(() => { transport.agent.destroy(); });
  const namespace = await testNamespace(t, 'events');
  const errors: unknown[] = [];
  const recorder = new EventRecorder(transport, { component: 'etcd-operator', instance: 'test', burst: 5, onError: (e) => errors.push(e) });

  const repeated = await involved(core, namespace, 'repeated');
  for (let i = 0; i < 4; i++) await recorder.record(repeated, 'Warning', 'MemberUnhealthy', 'member m1 is unhealthy');
  const hot = await involved(core, namespace, 'hot');
  for (let i = 0; i < 20; i++) await recorder.record(hot, 'Normal', 'Reconciled', `step ${i}`);
  assert.deepEqual(errors, []);

  const events = (await core.listNamespacedEvent({ namespace })).items;
  const forRepeated = events.filter((e) => e.involvedObject.uid === repeated.uid);
  assert.equal(forRepeated.length, 1, 'one Event object for four identical occurrences');
  const [event] = forRepeated;
  assert.ok(event);
  assert.equal(event.count, 4);
  assert.equal(event.type, 'Warning');
  assert.equal(event.reason, 'MemberUnhealthy');
  assert.equal(event.source?.component, 'etcd-operator');
  const forHot = events.filter((e) => e.involvedObject.uid === hot.uid);
  assert.equal(forHot.length, 5, 'twenty distinct events in a burst: only the bucket of five got through');
});
