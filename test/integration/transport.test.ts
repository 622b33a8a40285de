import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, ApiTransport } from '../../src/runtime/transport.js';
import { RuntimeMetrics } from '../../src/runtime/metrics.js';
import { adminKubeConfig } from '../support/lab.js';

test('an API path the server does not serve is a clear 404 ApiError, not a JSON parse error', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  const err = await transport.call('GET', '/apis/not-installed.example.com/v1/things').then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof ApiError, String(err));
  assert.equal(err.status, 404);
  assert.match(err.message, /GET \/apis\/not-installed.example.com\/v1\/things: HTTP 404: 404 page not found/);
});

test('every request is counted by method and status code in rest_client_requests_total', async (t) => {
  const metrics = new RuntimeMetrics();
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()), metrics.apiRequestAnswered);
  t.after(() => { transport.agent.destroy(); });
  await transport.call('GET', '/api/v1/namespaces/default');
  await transport.call('GET', '/api/v1/namespaces/default');
  await transport.call('GET', '/api/v1/namespaces/no-such-namespace-here').catch(() => undefined);
  const text = await metrics.registry.metrics();
  assert.match(text, /^rest_client_requests_total\{method="GET",code="200"\} 2$/m);
  assert.match(text, /^rest_client_requests_total\{method="GET",code="404"\} 1$/m);
});
