import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiAbandoned, ApiTimeout, ApiTransport } from '../../src/runtime/transport.js';
import { EtcdClient, EtcdError } from '../../src/etcd/client.js';
import { blackHole, droppingPort } from '../support/black-hole.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const kubeConfigFor = (port: number): KubeConfig => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hole', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'hole' }], contexts: [{ name: 'hole', cluster: 'hole', user: 'hole' }], currentContext: 'hole',
  });
  return kc;
};

/** How long a promise took to settle, and how. */
async function settle(p: Promise<unknown>): Promise<{ ms: number; err: unknown }> {
  const start = performance.now();
  const err = await p.then(() => undefined, (e: unknown) => e);
  return { ms: performance.now() - start, err };
}

test('an API call to a server that never answers fails at its timeout instead of hanging', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(kubeConfigFor(await blackHole(t))), () => undefined, { timeoutMs: 300 });
  t.after(() => { transport.agent.destroy(); });
  const { ms, err } = await settle(transport.call('GET', '/api/v1/namespaces/default/pods'));
  assert.ok(err instanceof ApiTimeout, String(err));
  assert.match(err.message, /GET \/api\/v1\/namespaces\/default\/pods: no answer within 300 ms/);
  assert.ok(ms < 2000, `gave up after ${Math.round(ms)} ms`);
});

test('a watch whose answer never starts fails at the timeout too', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(kubeConfigFor(await blackHole(t))), () => undefined, { timeoutMs: 300 });
  t.after(() => { transport.agent.destroy(); });
  const { ms, err } = await settle(transport.stream('/api/v1/pods?watch=1', new AbortController().signal));
  assert.ok(err instanceof ApiTimeout, String(err));
  assert.ok(ms < 2000, `gave up after ${Math.round(ms)} ms`);
});

test('a call within a term fails at its timeout though garbage is collected while it waits (no timer held weakly)', async (t) => {
  // AbortSignal.timeout() inside AbortSignal.any() is held only weakly: once collected, its abort never came, and a
  // leader's renewal on a black-holed connection waited past its renew deadline (Node 20, nodejs/node#57736).
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const transport = new ApiTransport(kubeConfigCredentials(kubeConfigFor(await blackHole(t))), () => undefined, { timeoutMs: 60_000 });
  t.after(() => { transport.agent.destroy(); });
  const pending = settle(transport.within(new AbortController().signal, 400).call('GET', '/apis/coordination.k8s.io/v1/namespaces/x/leases/y'));
  await new Promise((r) => setTimeout(r, 100));
  gc();
  gc();
  const { ms, err } = await Promise.race([pending, new Promise<{ ms: number; err: unknown }>((r) => setTimeout(() => { r({ ms: Infinity, err: 'still waiting after 3 s' }); }, 3000))]);
  assert.ok(err instanceof ApiTimeout, String(err));
  assert.ok(ms < 2000, `gave up after ${Math.round(ms)} ms`);
});

test('the end of a term abandons every call made within it at once, and later ones are never sent', async (t) => {
  const answered: string[] = [];
  const transport = new ApiTransport(kubeConfigCredentials(kubeConfigFor(await blackHole(t))), (method, code) => { answered.push(`${method} ${code}`); }, { timeoutMs: 60_000 });
  t.after(() => { transport.agent.destroy(); });
  const term = new AbortController();
  const api = transport.within(term.signal);
  const pending = settle(api.call('PUT', '/api/v1/namespaces/default/configmaps/x', {}));
  setTimeout(() => { term.abort(new Error('lease not renewed')); }, 200);
  const { ms, err } = await pending;
  assert.ok(err instanceof ApiAbandoned, String(err));
  assert.match(err.message, /abandoned \(lease not renewed\)/);
  assert.ok(ms < 2000, `abandoned after ${Math.round(ms)} ms, not at the 60 s timeout`);
  const sent = answered.length;
  const later = await settle(api.call('POST', '/api/v1/namespaces/default/configmaps', {}));
  assert.ok(later.err instanceof ApiAbandoned, String(later.err));
  assert.equal(answered.length, sent, 'a call after the term ended never reached the wire');
});

test('an etcd call and a snapshot stream to a member that went silent end at their deadline or with the term', async (t) => {
  const endpoint = `http://127.0.0.1:${await blackHole(t)}`;
  const etcd = new EtcdClient({ timeoutMs: 300 });
  const status = await settle(etcd.status(endpoint));
  assert.ok(status.err instanceof EtcdError && status.ms < 2000, `status: ${String(status.err)} after ${Math.round(status.ms)} ms`);

  const drain = async (stream: AsyncIterable<Buffer>): Promise<number> => {
    let bytes = 0;
    for await (const chunk of stream) bytes += chunk.length;
    return bytes;
  };
  // Before, the backup's deadline was checked only as chunks arrived: a silent stream waited for ever.
  const snapshot = await settle(drain(etcd.snapshot(endpoint, 500)));
  assert.ok(snapshot.err instanceof EtcdError, String(snapshot.err));
  assert.match(snapshot.err.message, /DEADLINE_EXCEEDED|Deadline exceeded/i);
  assert.ok(snapshot.ms < 3000, `snapshot gave up after ${Math.round(snapshot.ms)} ms`);

  const term = new AbortController();
  const fenced = new EtcdClient({ timeoutMs: 60_000, signal: term.signal });
  const pending = settle(drain(fenced.snapshot(endpoint)));
  const call = settle(fenced.memberList(endpoint));
  setTimeout(() => { term.abort(); }, 200);
  const [stream, list] = await Promise.all([pending, call]);
  assert.ok(stream.err instanceof EtcdError && stream.ms < 3000, `snapshot: ${String(stream.err)} after ${Math.round(stream.ms)} ms`);
  assert.ok(list.err instanceof EtcdError && list.ms < 3000, `member list: ${String(list.err)} after ${Math.round(list.ms)} ms`);
  assert.match(list.err.message, /abandoned/);
});

test('a call bounded in its connecting gives up on an address whose handshake is dropped; once connected, only its timeout counts', async (t) => {
  // A restore's look through a Service the nodes' proxies do not route yet: the SYN is dropped and sent again only
  // a second later, while the next look's new connection would be routed.
  const etcd = new EtcdClient({ timeoutMs: 5000 });
  const dropped = await settle(etcd.status(`http://127.0.0.1:${await droppingPort(t)}`, { connectWithinMs: 200 }));
  assert.ok(dropped.err instanceof EtcdError, String(dropped.err));
  assert.match(dropped.err.message, /not connected within 200 ms/);
  assert.ok(dropped.ms < 2000, `gave up after ${Math.round(dropped.ms)} ms`);
  // A member that is slow to answer once connected is waited for, to the client's timeout.
  const slow = new EtcdClient({ timeoutMs: 1000 });
  const silent = await settle(slow.status(`http://127.0.0.1:${await blackHole(t)}`, { connectWithinMs: 400 }));
  assert.ok(silent.err instanceof EtcdError, String(silent.err));
  assert.match(silent.err.message, /timed out/);
  assert.ok(silent.ms >= 950, `gave up after ${Math.round(silent.ms)} ms, before the timeout`);
});

test('a kept connection is no new connecting: the bound does not apply to a call that reuses it', async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    // Answered later than the bound below: only a bound wrongly set on the kept connection would cut it.
    req.on('end', () => { setTimeout(() => { res.setHeader('content-type', 'application/json'); res.end('{"version":"3.6.0"}'); }, 50); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }));
  let connections = 0;
  server.on('connection', () => { connections++; });
  const etcd = new EtcdClient({ timeoutMs: 5000 });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  assert.equal((await etcd.status(endpoint)).version, '3.6.0');
  assert.equal((await etcd.status(endpoint, { connectWithinMs: 1 })).version, '3.6.0');
  assert.equal(connections, 1, 'the second call went down the kept connection');
});

test('a timeout with a fraction of a millisecond (a lease attempt bounded by the time left to its deadline) is taken as it is', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(kubeConfigFor(await blackHole(t))), () => undefined);
  t.after(() => { transport.agent.destroy(); });
  const bounded = transport.within(new AbortController().signal, 250.7);
  const { ms, err } = await settle(bounded.call('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/x'));
  assert.ok(err instanceof ApiTimeout, String(err));
  assert.match(err.message, /no answer within 251 ms/);
  assert.ok(ms < 2000, `gave up after ${Math.round(ms)} ms`);
});
