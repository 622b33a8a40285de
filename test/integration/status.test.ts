import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiTransport } from '../../src/runtime/transport.js';
import { writeStatus } from '../../src/runtime/status.js';
import type { WithStatus } from '../../src/runtime/status.js';
import { adminKubeConfig, testNamespace } from '../support/lab.js';
import { WIDGET_GROUP, ensureCrd, widgetCrd } from '../support/test-crd.js';

interface WidgetStatus { observedSize?: number; writes?: number }
interface Widget extends WithStatus<WidgetStatus> { spec?: { size?: number } }

test('a status write that conflicts is recomputed on a fresh read, losing neither writer', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, widgetCrd);
  const namespace = await testNamespace(t, 'status');
  const collection = `/apis/${WIDGET_GROUP}/v1/namespaces/${namespace}/widgets`;
  const stale = (await transport.call('POST', collection, {
    apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3 },
  })) as Widget;

  // Someone else changes the spec after our cached copy was taken.
  await transport.call('PUT', `${collection}/w`, { ...stale, spec: { size: 5 } });

  const computedFrom: (number | undefined)[] = [];
  const written = await writeStatus<WidgetStatus, Widget>(transport, `${collection}/w`, stale, (current) => {
    computedFrom.push(current.spec?.size);
    return { observedSize: current.spec?.size, writes: (current.status?.writes ?? 0) + 1 };
  });
  assert.deepEqual(computedFrom, [3, 5], 'first from the stale copy, then, after the 409, from the fresh one');
  assert.deepEqual(written?.status, { observedSize: 5, writes: 1 });
  const stored = (await transport.call('GET', `${collection}/w`)) as Widget;
  assert.equal(stored.spec?.size, 5, 'the status write did not undo the other writer');
  assert.deepEqual(stored.status, { observedSize: 5, writes: 1 });

  const unchanged = await writeStatus<WidgetStatus, Widget>(transport, `${collection}/w`, stored, () => undefined);
  assert.equal(unchanged, undefined, 'nothing to write, nothing written');
  const same = await writeStatus<WidgetStatus, Widget>(transport, `${collection}/w`, stored, () => ({ writes: 1, observedSize: 5, gone: undefined } as WidgetStatus));
  assert.equal(same, undefined, 'the stored status in another key order is not written again');
});
