import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Secret } from '@kubernetes/client-node';
import { eventually, lab } from '../support/lab.js';
import { labLookup } from '../support/lab-dns.js';
import { EtcdClient } from '../../src/etcd/client.js';
import { clientUrl } from '../../src/etcd/identity.js';
import { ON_VOLUMES, isReady, testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGet, etcdGetPrefix, etcdPut } from '../support/etcd-gateway.js';
import type { CallOptions } from '../support/etcd-gateway.js';
import { issueCa, issueLeaf } from '../../src/tls/certificates.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';

const DAY = 86_400_000;
const text = (s: V1Secret, key: string): string => Buffer.from(s.data?.[key] ?? '', 'base64').toString('utf8');

const running = (bed: Testbed, name: string, size: number) => async (): Promise<EtcdCluster | undefined> => {
  const c = await bed.get(name);
  const pods = await bed.pods(name);
  return c.status?.phase === 'Running' && c.status.readyMembers === size && c.status.size === size && pods.length === size && pods.every(isReady) ? c : undefined;
};

/** The client Service over https, checked against the certificate's Service name. */
async function secureEndpoint(bed: Testbed, name: string): Promise<string> {
  const ip = (await bed.core.readNamespacedService({ name: `${name}-client`, namespace: bed.namespace })).spec?.clusterIP ?? '';
  return `https://${ip}:2379`;
}

/** Without a client certificate etcd refuses the connection; with the cluster's, it serves. */
async function checkClientAuth(t: TestContext, endpoint: string, withCert: CallOptions, withoutCert: CallOptions): Promise<void> {
  await eventually('a write with the client certificate', 30_000, async () => (await etcdPut(endpoint, 'secure', 'yes', withCert)) > 0 || undefined);
  await assert.rejects(etcdGet(endpoint, 'secure', withoutCert), /certificate|handshake|socket hang up|ECONNRESET/, 'no certificate, no service');
  await assert.rejects(etcdGet(endpoint.replace('https:', 'http:'), 'secure', { timeoutMs: 3000 }), 'no plain http');
  t.diagnostic('a client without a certificate was refused');
}

test('static TLS (CoreOS Secrets): members talk https, clients need a certificate; scale up and member replacement work', async (t) => {
  const bed = await testbed(t, 'tls');
  const operator = startOperator(t, bed.namespace);
  // Certificates as a user would make them, in the CoreOS operator's Secret layout.
  const ca = issueCa('user-ca', 30 * DAY);
  const names = [`*.secure.${bed.namespace}.svc`, `*.secure.${bed.namespace}.svc.cluster.local`, `secure-client.${bed.namespace}.svc`, 'localhost', '127.0.0.1'];
  const peer = issueLeaf(ca, { commonName: 'peer', altNames: names, usage: ['server', 'client'], validForMs: 30 * DAY });
  const server = issueLeaf(ca, { commonName: 'server', altNames: names, usage: ['server', 'client'], validForMs: 30 * DAY });
  const client = issueLeaf(ca, { commonName: 'operator', altNames: [], usage: ['client'], validForMs: 30 * DAY });
  await bed.secret('etcd-peer-tls', { 'peer.crt': peer.cert, 'peer.key': peer.key, 'peer-ca.crt': ca.cert });
  await bed.secret('etcd-server-tls', { 'server.crt': server.cert, 'server.key': server.key, 'server-ca.crt': ca.cert });
  await bed.secret('etcd-operator-tls', { 'etcd-client.crt': client.cert, 'etcd-client.key': client.key, 'etcd-client-ca.crt': ca.cert });
  // Secrets named but missing: every missing one is named, the phase says the cluster is not yet made, no pod is made.
  await bed.create('halfmade', { size: 1, TLS: { static: { member: { peerSecret: 'etcd-peer-tls', serverSecret: 'no-server-tls' }, operatorSecret: 'no-operator-tls' } } });
  const refused = await eventually('the missing Secrets named', 60_000, async () => {
    const c = await bed.get('halfmade');
    return c.status?.conditions?.find((x) => x.type === 'Degraded' && x.reason === 'SecretMissing') ? c : undefined;
  });
  const message = refused.status?.conditions?.find((x) => x.type === 'Degraded')?.message ?? '';
  assert.ok(message.includes('no-server-tls') && message.includes('no-operator-tls') && !message.includes('etcd-peer-tls'), message);
  assert.equal(refused.status?.phase, 'Creating');
  assert.deepEqual(await bed.pods('halfmade'), [], 'no member made');
  await bed.create('secure', { size: 3, TLS: { static: { member: { peerSecret: 'etcd-peer-tls', serverSecret: 'etcd-server-tls' }, operatorSecret: 'etcd-operator-tls' } } });
  await eventually('3 TLS members Running', 180_000, running(bed, 'secure', 3));
  const command = (await bed.pods('secure'))[0]?.spec?.containers[0]?.command ?? [];
  assert.ok(command.some((f) => f.startsWith('--initial-advertise-peer-urls=https://')), 'peers on https');
  assert.ok(command.includes('--client-cert-auth=true') && command.includes('--peer-client-cert-auth=true'));

  const endpoint = await secureEndpoint(bed, 'secure');
  const servername = `secure-client.${bed.namespace}.svc`;
  const withCert: CallOptions = { tls: { ca: ca.cert, cert: client.cert, key: client.key, servername }, timeoutMs: 3000 };
  await checkClientAuth(t, endpoint, withCert, { tls: { ca: ca.cert, servername }, timeoutMs: 3000 });
  for (let i = 0; i < 100; i++) await etcdPut(endpoint, `k-${i}`, `v-${i}`, withCert);

  await bed.patchSpec('secure', { size: 4 });
  const four = await eventually('4 TLS members', 180_000, running(bed, 'secure', 4));
  const victim = four.status?.members?.ready?.[0] ?? '';
  await bed.core.deleteNamespacedPod({ name: victim, namespace: bed.namespace });
  await eventually('the lost member replaced under TLS', 180_000, async () => {
    const c = await running(bed, 'secure', 4)();
    return c && !(c.status?.members?.ready ?? []).includes(victim) ? c : undefined;
  });
  const keys = await eventually('keys readable', 30_000, () => etcdGetPrefix(endpoint, 'k-', withCert));
  assert.equal(keys.size, 100, 'every key survived scale-up and replacement');
  // Snapshots (backups) stream over gRPC with the operator's certificate, checked against the member's name.
  const member = (await bed.pods('secure'))[0]?.metadata?.name ?? '';
  const etcd = new EtcdClient({ lookup: labLookup(), tls: { ca: ca.cert, cert: client.cert, key: client.key } });
  let bytes = 0;
  for await (const chunk of etcd.snapshot(clientUrl({ cluster: 'secure', namespace: bed.namespace, domain: lab().clusterDomain, tls: true }, member))) bytes += chunk.length;
  assert.ok(bytes > 100 * 8, `a snapshot over TLS (${bytes} bytes)`);
  await assert.rejects(async () => {
    for await (const chunk of new EtcdClient({ lookup: labLookup(), tls: { ca: ca.cert } }).snapshot(clientUrl({ cluster: 'secure', namespace: bed.namespace, domain: lab().clusterDomain, tls: true }, member))) bytes += chunk.length;
  }, /snapshot/, 'no snapshot without a client certificate');
  operator.succeeded();
});

test('auto TLS: the operator makes a CA and certificates, renews them before expiry and rolls the members onto them', async (t) => {
  const bed = await testbed(t, 'autotls');
  // Four-minute certificates renewed three minutes early: a renewal a minute after creation.
  const operator = startOperator(t, bed.namespace, ['--auto-tls-validity', '240', '--auto-tls-renew-before', '180']);
  await bed.create('auto', { size: 3, TLS: { auto: true } });
  await eventually('3 auto-TLS members Running', 180_000, running(bed, 'auto', 3));
  const readClient = async (): Promise<V1Secret> => bed.core.readNamespacedSecret({ name: 'auto-client-tls', namespace: bed.namespace });
  const first = await readClient();
  const generation = (s: V1Secret): string | undefined => s.metadata?.annotations?.['etcd.database.coreos.com/tls-generation'];
  const options = (s: V1Secret): CallOptions => ({
    tls: { ca: text(s, 'etcd-client-ca.crt'), cert: text(s, 'etcd-client.crt'), key: text(s, 'etcd-client.key'), servername: `auto-client.${bed.namespace}.svc` }, timeoutMs: 3000,
  });
  const endpoint = await secureEndpoint(bed, 'auto');
  await checkClientAuth(t, endpoint, options(first), { tls: { ca: text(first, 'etcd-client-ca.crt'), servername: `auto-client.${bed.namespace}.svc` }, timeoutMs: 3000 });
  const configOf = async (): Promise<string[]> => (await bed.pods('auto')).map((p) => p.metadata?.annotations?.['etcd.database.coreos.com/config'] ?? '');
  const before = await configOf();

  const renewed = await eventually('certificates renewed', 120_000, async () => {
    const s = await readClient();
    return generation(s) !== generation(first) ? s : undefined;
  });
  const started = Date.now();
  await eventually('members rolled onto the renewed certificates', 180_000, async () => {
    const c = await running(bed, 'auto', 3)();
    const configs = await configOf();
    return c && configs.every((x) => !before.includes(x)) ? c : undefined;
  });
  t.diagnostic(`members rolled onto renewed certificates ${Date.now() - started} ms after renewal`);
  assert.equal(text(renewed, 'etcd-client-ca.crt'), text(first, 'etcd-client-ca.crt'), 'the CA stays');
  assert.equal(await eventually('the key read with the renewed certificate', 30_000, () => etcdGet(endpoint, 'secure', options(renewed))), 'yes');
  operator.succeeded();
});

test('auto TLS: the CA Secret lost under running members is named, not made anew; deleted with the member pods as told, the members restart on their data with a new CA (issue 32, trial)', async (t) => {
  const bed = await testbed(t, 'lostca');
  const operator = startOperator(t, bed.namespace);
  await bed.create('lost', { size: 1, TLS: { auto: true }, pod: ON_VOLUMES });
  await eventually('an auto-TLS member Running', 180_000, running(bed, 'lost', 1));
  const readClient = async (): Promise<V1Secret> => bed.core.readNamespacedSecret({ name: 'lost-client-tls', namespace: bed.namespace });
  const endpoint = await secureEndpoint(bed, 'lost');
  const options = (s: V1Secret): CallOptions => ({
    tls: { ca: text(s, 'etcd-client-ca.crt'), cert: text(s, 'etcd-client.crt'), key: text(s, 'etcd-client.key'), servername: `lost-client.${bed.namespace}.svc` }, timeoutMs: 3000,
  });
  await eventually('a write', 30_000, async () => (await etcdPut(endpoint, 'kept', 'yes', options(await readClient()))) > 0 || undefined);
  const secrets = ['lost-ca', 'lost-peer-tls', 'lost-server-tls', 'lost-client-tls'];
  for (const name of secrets) await bed.core.deleteNamespacedSecret({ name, namespace: bed.namespace });
  // Read by name at most a minute late: named within two.
  const told = await eventually('Degraded CASecretMissing', 150_000, async () =>
    (await bed.get('lost')).status?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'CASecretMissing'));
  t.diagnostic(told.message ?? '');
  assert.match(told.message ?? '', /the members trust it/);
  const exists = async (name: string): Promise<boolean> => bed.core.readNamespacedSecret({ name, namespace: bed.namespace }).then(() => true, () => false);
  assert.equal(await exists('lost-ca'), false, 'no CA made under the running member');
  // As the condition says, with volumes: every member pod at once.
  for (const p of await bed.pods('lost')) await bed.core.deleteNamespacedPod({ name: p.metadata?.name ?? '', namespace: bed.namespace });
  await eventually('back Running on a new CA', 180_000, running(bed, 'lost', 1));
  assert.equal(await eventually('the key, read with the new certificate', 30_000, async () => etcdGet(endpoint, 'kept', options(await readClient()))), 'yes');
  operator.succeeded();
});
