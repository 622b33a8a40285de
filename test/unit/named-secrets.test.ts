import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Secret } from '@kubernetes/client-node';
import { NamedSecrets } from '../../src/controllers/cluster/named-secrets.js';
import { ConfigurationError, DEFAULT_AUTO_TLS, ensureAutoTls, requireStaticTls } from '../../src/controllers/cluster/tls.js';
import { misconfigured } from '../../src/controllers/cluster/status.js';
import { ApiError } from '../../src/runtime/transport.js';
import type { ApiTransport } from '../../src/runtime/transport.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';

/** An API server holding Secrets in one namespace, recording each request as "METHOD path". */
function secretsServer(initial: Record<string, string>): { transport: ApiTransport; requests: string[]; stored: Map<string, V1Secret> } {
  let version = 0;
  const secret = (name: string, data: string): V1Secret => ({ metadata: { name, resourceVersion: String(++version) }, stringData: { v: data } });
  const stored = new Map(Object.entries(initial).map(([name, data]) => [name, secret(name, data)]));
  const requests: string[] = [];
  const call = (method: string, path: string, body?: unknown): Promise<unknown> => {
    requests.push(`${method} ${path}`);
    const name = path.split('/secrets')[1]?.slice(1) || ((body as V1Secret | undefined)?.metadata?.name ?? '');
    const held = stored.get(name);
    if (method === 'GET') return held ? Promise.resolve(held) : Promise.reject(new ApiError(404, 'NotFound', name));
    if (method === 'POST' && held) return Promise.reject(new ApiError(409, 'AlreadyExists', name));
    if (method === 'PUT' && held?.metadata?.resourceVersion !== (body as V1Secret).metadata?.resourceVersion) return Promise.reject(new ApiError(409, 'Conflict', name));
    const made = structuredClone(body) as V1Secret;
    made.metadata = Object.assign(made.metadata ?? {}, { name, resourceVersion: String(++version) });
    stored.set(name, made);
    return Promise.resolve(made);
  };
  return { transport: { call } as unknown as ApiTransport, requests, stored };
}

test('Secrets are read by name, never listed; a reading is reused until refreshMs old, a missing one too', async () => {
  const api = secretsServer({ a: '1' });
  let now = 0;
  const secrets = new NamedSecrets(api.transport, 60_000, () => now);
  assert.equal((await secrets.get('ns', 'a'))?.stringData?.['v'], '1');
  assert.equal(await secrets.get('ns', 'b'), undefined);
  now = 59_999;
  await secrets.get('ns', 'a');
  await secrets.get('ns', 'b');
  assert.deepEqual(api.requests, ['GET /api/v1/namespaces/ns/secrets/a', 'GET /api/v1/namespaces/ns/secrets/b']);
  api.stored.delete('a');
  now = 60_000;
  assert.equal(await secrets.get('ns', 'a'), undefined, 'a deletion is seen once the reading is old');
  assert.equal(api.requests.length, 3);
});

test('what the operator wrote is remembered; a conflict or a lost race is read afresh', async () => {
  const api = secretsServer({ taken: 'theirs' });
  const secrets = new NamedSecrets(api.transport, 60_000, () => 0);
  const made = await secrets.create('ns', { metadata: { name: 'mine' }, stringData: { v: 'x' } });
  assert.equal((await secrets.get('ns', 'mine'))?.metadata?.resourceVersion, made.metadata?.resourceVersion);
  assert.deepEqual(api.requests, ['POST /api/v1/namespaces/ns/secrets'], 'no read after its own write');
  // Another pass made it first: that one is answered.
  assert.equal((await secrets.create('ns', { metadata: { name: 'taken' }, stringData: { v: 'ours' } })).stringData?.['v'], 'theirs');
  // A replace on a stale version fails, and the next read goes to the server.
  const stale = { metadata: { name: 'mine', resourceVersion: '0' }, stringData: { v: 'y' } };
  await assert.rejects(secrets.replace('ns', stale), (err: unknown) => err instanceof ApiError && err.status === 409);
  const before = api.requests.length;
  assert.equal((await secrets.get('ns', 'mine'))?.stringData?.['v'], 'x');
  assert.equal(api.requests.length, before + 1);
});

test('static TLS: every missing Secret is named, before any member is made (issue 32, finding 14)', async () => {
  const secrets = new NamedSecrets(secretsServer({ 'peer-tls': 'p' }).transport);
  const names = { peer: 'peer-tls', server: 'server-tls', operator: 'client-tls', auto: false };
  await assert.rejects(requireStaticTls(secrets, 'ns', names), (err: unknown) => err instanceof ConfigurationError && err.reason === 'SecretMissing'
    && /server-tls \(the members' server certificate\), client-tls \(the operator's client certificate\)$/.test(err.message) && !err.message.includes('peer-tls'));
  const all = new NamedSecrets(secretsServer({ 'peer-tls': 'p', 'server-tls': 's', 'client-tls': 'c' }).transport);
  await requireStaticTls(all, 'ns', names);
});

test('a cluster stopped by its configuration before it ran is Creating, not without a phase; a running one keeps its phase', () => {
  const cluster = (phase?: string): EtcdCluster => ({ apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdCluster', metadata: { name: 'c', generation: 2 }, spec: { size: 3 },
    ...(phase ? { status: { phase } } : {}) }) as EtcdCluster;
  const err = { reason: 'SecretMissing', message: 'missing' };
  const fresh = misconfigured(cluster(), err, '2026-11-26T00:00:00Z');
  assert.equal(fresh.phase, 'Creating');
  assert.equal(fresh.conditions?.find((c) => c.type === 'Degraded')?.reason, 'SecretMissing');
  assert.equal(misconfigured(cluster('Running'), err, '2026-11-26T00:00:00Z').phase, 'Running');
});

test('auto TLS: a CA is made anew only where nothing trusts the old one; its loss under running members is named, with the way out (issue 32, trial 3)', async () => {
  const address = { cluster: 'c', namespace: 'ns', domain: 'cluster.local', tls: true };
  const names = { peer: 'c-peer-tls', server: 'c-server-tls', operator: 'c-client-tls', auto: true };
  const api = secretsServer({});
  const secrets = new NamedSecrets(api.transport);
  await assert.rejects(ensureAutoTls(secrets, address, 'u', names, DEFAULT_AUTO_TLS, Date.now(), 3),
    (err: unknown) => err instanceof ConfigurationError && err.reason === 'CASecretMissing' && /the members trust it/.test(err.message) && /kubectl delete pod -l etcd_cluster=c/.test(err.message));
  assert.deepEqual(api.requests.filter((r) => !r.startsWith('GET')), [], 'nothing issued under running members');
  const now = Date.now();
  const made = await ensureAutoTls(secrets, address, 'u', names, DEFAULT_AUTO_TLS, now, 0);
  assert.ok(made.generation);
  assert.equal(made.renewAtMs, now + DEFAULT_AUTO_TLS.validityMs - DEFAULT_AUTO_TLS.renewBeforeMs, 'renewed the renewal period before it expires');
  assert.deepEqual([...api.stored.keys()].sort(), ['c-ca', 'c-client-tls', 'c-peer-tls', 'c-server-tls'], 'no member pod: a CA and its certificates made');
  // Found fresh later: the same generation, renewed when the first of its certificates is due (notAfter to the second).
  const again = await ensureAutoTls(secrets, address, 'u', names, DEFAULT_AUTO_TLS, now + 1000, 3);
  assert.equal(again.generation, made.generation);
  assert.ok(Math.abs(again.renewAtMs - made.renewAtMs) <= 1000, `${again.renewAtMs} against ${made.renewAtMs}`);
});
