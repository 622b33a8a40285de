import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiTransport } from '../../src/runtime/transport.js';
import { Reflector } from '../../src/runtime/reflector.js';

test('waiting for a first sync that cannot come ends when the signal aborts', async () => {
  // Port 1 on loopback refuses every connection: the reflector keeps retrying its list and never syncs.
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'none', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'none' }], contexts: [{ name: 'none', cluster: 'none', user: 'none' }], currentContext: 'none',
  });
  const transport = new ApiTransport(kubeConfigCredentials(kc));
  const reflector = new Reflector(transport, { path: '/api/v1/pods' });
  const stop = new AbortController();
  const running = reflector.run(stop.signal);
  const waiting = reflector.waitForSync(stop.signal);
  setTimeout(() => { stop.abort(); }, 300);
  assert.equal(await waiting, false);
  await running;
  assert.equal(reflector.hasSynced, false);
  assert.equal(await reflector.waitForSync(stop.signal), false, 'an already-aborted signal answers at once');
  transport.agent.destroy();
});
