import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, ApiTransport } from '../../src/runtime/transport.js';
import { adminKubeConfig } from '../support/lab.js';

test('an API path the server does not serve is a clear 404 ApiError, not a JSON parse error', async (t) => {
  const transport = new ApiTransport(adminKubeConfig());
  t.after(() => { transport.agent.destroy(); });
  const err = await transport.call('GET', '/apis/not-installed.example.com/v1/things').then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof ApiError, String(err));
  assert.equal(err.status, 404);
  assert.match(err.message, /GET \/apis\/not-installed.example.com\/v1\/things: HTTP 404: 404 page not found/);
});
