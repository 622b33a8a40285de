import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { EtcdClient } from '../../src/etcd/client.js';

// A healthy cluster's look asks its members every 30 s: each pass used to open new connections (a name lookup,
// a TCP and for https a TLS handshake per call), most of an idle operator's CPU. The HTTP servers here stand for
// etcd's JSON gateway only as places to count connections and to tell which one answered.

/** A server on `host`:`port` (0: any) answering every call with a member list of `names`, closed when the test ends. */
async function memberListServer(t: TestContext, host: string, port: number, names: string[]): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ members: names.map((name, i) => ({ ID: String(i + 1), name })) })); });
  });
  server.on('connection', () => { connections++; });
  // etcd's gateway (Go's http.Server as etcd sets it up) closes no idle connection; Node's server would after 5 s.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((ok) => server.listen(port, host, ok));
  t.after(() => { server.closeAllConnections(); server.close(); });
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

test('calls to a member 6 s apart (beyond Node\'s 5 s default) share one kept connection', async (t) => {
  const member = await memberListServer(t, '127.0.0.1', 0, ['a']);
  const endpoint = `http://127.0.0.1:${member.port}`;
  const etcd = new EtcdClient({ timeoutMs: 2000 });
  assert.equal((await etcd.memberList(endpoint)).length, 1);
  await new Promise((r) => setTimeout(r, 6000));
  assert.equal((await etcd.memberList(endpoint)).length, 1);
  assert.equal(member.connections(), 1, 'the second call reused the first one\'s connection');
});

test('a kept connection the member closed is not used again: the next call connects anew and is answered', async (t) => {
  const member = await memberListServer(t, '127.0.0.1', 0, []);
  const endpoint = `http://127.0.0.1:${member.port}`;
  const etcd = new EtcdClient({ timeoutMs: 2000 });
  await etcd.memberList(endpoint);
  member.server.closeIdleConnections();
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(await etcd.memberList(endpoint), []);
  assert.equal(member.connections(), 2);
});

test('a member\'s name is resolved at every call: once it points at a new address, the call goes there, not down the kept connection', async (t) => {
  // The pod made again under its name, at a new address, the same port; the old process still answers at the old.
  const { port } = await memberListServer(t, '127.0.0.1', 0, ['old']);
  await memberListServer(t, '127.0.0.2', port, ['new']);
  let address = '127.0.0.1';
  const lookup: LookupFunction = (_host, _options, callback) => { callback(null, address, 4); };
  const etcd = new EtcdClient({ timeoutMs: 2000, lookup });
  const endpoint = `http://member.test:${port}`;
  assert.equal((await etcd.memberList(endpoint))[0]?.name, 'old');
  address = '127.0.0.2';
  assert.equal((await etcd.memberList(endpoint))[0]?.name, 'new');
});
