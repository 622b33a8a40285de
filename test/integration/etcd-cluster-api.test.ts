import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { ApiError, ApiTransport } from '../../src/runtime/transport.js';
import { etcdClusterCrd } from '../../src/api/crds.js';
import { DEFAULT_ETCD_VERSION, DEFAULT_REPOSITORY, GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { adminKubeConfig, lab, testNamespace } from '../support/lab.js';
import { ensureCrd } from '../support/test-crd.js';

const collection = (ns: string): string => `/apis/${GROUP}/${VERSION}/namespaces/${ns}/etcdclusters`;
const manifest = (name: string, spec: unknown): unknown => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name }, spec });

/** Manifests written for the CoreOS operator, which must apply unchanged. */
const accepted: [string, unknown][] = [
  ['coreos-minimal', { size: 3, version: '3.5.17' }],
  ['leading-v', { size: 1, version: 'v3.6.5' }],
  ['coreos-full', {
    size: 5, repository: 'quay.io/coreos/etcd', version: '3.5.17', paused: false,
    pod: {
      labels: { team: 'storage' }, annotations: { 'example.com/owner': 'me' }, nodeSelector: { disk: 'ssd' },
      antiAffinity: true, resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'etcd', effect: 'NoSchedule' }],
      etcdEnv: [{ name: 'ETCD_AUTO_COMPACTION_RETENTION', value: '1' }],
      persistentVolumeClaimSpec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      busyboxImage: 'busybox:1.28.0-glibc', DNSTimeoutInSecond: 60, ClusterDomain: 'cluster.local',
      securityContext: { runAsNonRoot: true, runAsUser: 9000, fsGroup: 9000 },
    },
    TLS: { static: { member: { peerSecret: 'etcd-peer-tls', serverSecret: 'etcd-server-tls' }, operatorSecret: 'etcd-client-tls' } },
  }],
];

/** Each bad spec, and what the rejection must say (the field and why). */
const rejected: [string, unknown, RegExp][] = [
  ['size-zero', { size: 0 }, /spec\.size.*greater than or equal to 1/],
  ['size-negative', { size: -3 }, /spec\.size.*greater than or equal to 1/],
  ['size-huge', { size: 10 }, /spec\.size.*less than or equal to 9/],
  ['size-string', { size: 'three' }, /spec\.size.*must be of type integer/],
  ['size-missing', { version: '3.5.17' }, /spec\.size.*Required/],
  ['version-latest', { size: 3, version: 'latest' }, /spec\.version.*should match/],
  ['version-partial', { size: 3, version: '3.5' }, /spec\.version.*should match/],
  ['label-app', { size: 3, pod: { labels: { app: 'mine' } } }, /spec\.pod\.labels.*reserved for the operator/],
  ['label-etcd', { size: 3, pod: { labels: { etcd_cluster: 'other' } } }, /spec\.pod\.labels.*reserved for the operator/],
  ['env-bootstrap', { size: 3, pod: { etcdEnv: [{ name: 'ETCD_INITIAL_CLUSTER', value: 'x=http://evil:2380' }] } }, /spec\.pod\.etcdEnv.*may not set ETCD_INITIAL_CLUSTER:/],
  // A member recreated with this formed a cluster of its own, and the operator then removed the healthy members.
  ['env-force-new-cluster', { size: 3, pod: { etcdEnv: [{ name: 'ETCD_TRACING', value: 'x' }, { name: 'ETCD_FORCE_NEW_CLUSTER', value: 'true' }] } },
    /spec\.pod\.etcdEnv.*may not set ETCD_FORCE_NEW_CLUSTER:/],
  ['env-metrics-listener', { size: 3, pod: { etcdEnv: [{ name: 'ETCD_LISTEN_METRICS_URLS', value: 'http://127.0.0.1:9' }] } }, /may not set ETCD_LISTEN_METRICS_URLS:/],
  ['env-no-fsync', { size: 3, pod: { etcdEnv: [{ name: 'ETCD_UNSAFE_NO_FSYNC', value: 'true' }] } }, /may not set ETCD_UNSAFE_NO_FSYNC:/],
  ['env-discovery', { size: 3, pod: { etcdEnv: [{ name: 'ETCD_DISCOVERY_SRV', value: 'example.com' }] } }, /may not set ETCD_DISCOVERY_SRV:/],
  ['tls-both', { size: 3, TLS: { auto: true, static: { member: { peerSecret: 'a', serverSecret: 'b' }, operatorSecret: 'c' } } }, /spec\.TLS.*either TLS\.static or TLS\.auto/],
  ['tls-partial', { size: 3, TLS: { static: { member: { peerSecret: 'a' }, operatorSecret: 'c' } } }, /spec\.TLS\.static\.member\.serverSecret.*Required/],
  ['secret-path', { size: 3, TLS: { static: { member: { peerSecret: '../x', serverSecret: 'b' }, operatorSecret: 'c' } } }, /spec\.TLS\.static\.member\.peerSecret.*should match/],
  ['quota-tiny', { size: 3, quotaBackendBytes: 1024 }, /spec\.quotaBackendBytes.*greater than or equal to 1048576/],
  ['compaction-mode', { size: 3, autoCompaction: { mode: 'sometimes', retention: '1h' } }, /spec\.autoCompaction\.mode.*supported values/],
  ['compaction-revision-unit', { size: 3, autoCompaction: { mode: 'revision', retention: '10h' } }, /spec\.autoCompaction.*revision retention is a number/],
  ['defrag-percent', { size: 3, defragmentation: { unusedPercent: 100 } }, /spec\.defragmentation\.unusedPercent.*less than or equal to 99/],
  // Issue 17: the manifest of the Operator articles, verbatim; etcd before 3.5 is refused, naming what to use.
  ['example-etcd-cluster', { size: 3, version: '3.2.13' }, /spec\.version.*etcd 3\.2\.13 is not supported: the oldest version the operator runs is 3\.5\.0.*use 3\.5\.35/],
  ['version-3-4', { size: 3, version: 'v3.4.27' }, /spec\.version.*etcd v3\.4\.27 is not supported/],
  ['quantity-bad', { size: 3, pod: { resources: { requests: { cpu: 'lots' } } } }, /spec\.pod\.resources\.requests.*not a quantity/],
  ['requests-over-limits', { size: 3, pod: { resources: { requests: { memory: '1Gi', cpu: 1 }, limits: { memory: '512Mi', cpu: '2' } } } },
    /spec\.pod\.resources.*a request may not exceed its limit/],
  ['annotations-huge', { size: 3, pod: { annotations: Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((k) => [k, 'x'.repeat(60_000)])) } },
    /spec\.pod\.annotations.*at most 258048 bytes in all/],
  ['annotation-key', { size: 3, pod: { annotations: { 'not a key': 'x' } } }, /spec\.pod\.annotations.*key/],
  [`long-${'x'.repeat(50)}`, { size: 3 }, /at most 54 characters/],
  ['dotted.name', { size: 3 }, /at most 54 characters: a lowercase letter/],
];

test('EtcdCluster admission: CoreOS manifests apply unchanged with defaults; bad specs are refused naming the field', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, etcdClusterCrd());
  const namespace = await testNamespace(t, 'api');

  for (const [name, spec] of accepted) {
    const created = (await transport.call('POST', collection(namespace), manifest(name, spec))) as EtcdCluster;
    assert.equal(created.spec.size, (spec as { size: number }).size, name);
  }
  const minimal = (await transport.call('GET', `${collection(namespace)}/coreos-minimal`)) as EtcdCluster;
  assert.equal(minimal.spec.repository, DEFAULT_REPOSITORY, 'repository defaulted');
  const defaulted = (await transport.call('POST', collection(namespace), manifest('defaulted', { size: 1 }))) as EtcdCluster;
  assert.equal(defaulted.spec.version, DEFAULT_ETCD_VERSION, 'version defaulted');

  // As kubectl sends them: strict field validation, so that an unknown field is refused rather than dropped.
  const strict = `${collection(namespace)}?fieldValidation=Strict`;
  for (const [name, spec, why] of rejected) {
    const refusal = await transport.call('POST', strict, manifest(name, spec)).then(() => undefined, (e: unknown) => e);
    assert.ok(refusal instanceof ApiError, `${name} was accepted`);
    assert.equal(refusal.status, 422, name);
    assert.match(refusal.message, why, name);
  }
  const typo = await transport.call('POST', strict, manifest('typo', { size: 3, pod: { resources: { request: { cpu: '1' } } } })).then(() => undefined, (e: unknown) => e);
  assert.ok(typo instanceof ApiError && typo.status === 400, 'an unknown field inside pod.resources is refused');
  assert.match(typo.message, /unknown field "spec\.pod\.resources\.request"/);
});

test('TLS cannot be switched on, off or between static and auto, nor volumes added or removed, on an existing EtcdCluster', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, etcdClusterCrd());
  const namespace = await testNamespace(t, 'tlsswitch');
  const staticTls = { static: { member: { peerSecret: 'p', serverSecret: 's' }, operatorSecret: 'o' } };
  await transport.call('POST', collection(namespace), manifest('plain', { size: 1 }));
  await transport.call('POST', collection(namespace), manifest('auto', { size: 1, TLS: { auto: true } }));
  await transport.call('POST', collection(namespace), manifest('user', { size: 1, TLS: staticTls }));
  const patch = (name: string, spec: unknown): Promise<unknown> =>
    transport.call('PATCH', `${collection(namespace)}/${name}`, { spec }, 'application/merge-patch+json').then(() => undefined, (e: unknown) => e);
  for (const [name, change] of [['plain', { TLS: { auto: true } }], ['auto', { TLS: null }], ['auto', { TLS: { auto: null, ...staticTls } }]] as const) {
    const refusal = await patch(name, change);
    assert.ok(refusal instanceof ApiError, `${name} → ${JSON.stringify(change)} was accepted`);
    assert.match(refusal.message, /TLS cannot be turned on or off/);
  }
  assert.equal(await patch('user', { TLS: { static: { operatorSecret: 'o2' } } }), undefined, 'static Secrets may be renamed');
  // Nor may members move between volumes and emptyDirs: one restarted on the other kind would come back without its data.
  await transport.call('POST', collection(namespace), manifest('onvolumes', { size: 1, pod: { persistentVolumeClaimSpec: { resources: { requests: { storage: '1Gi' } } } } }));
  for (const [name, change] of [['plain', { pod: { persistentVolumeClaimSpec: { resources: { requests: { storage: '1Gi' } } } } }], ['onvolumes', { pod: { persistentVolumeClaimSpec: null } }]] as const) {
    const refusal = await patch(name, change);
    assert.ok(refusal instanceof ApiError, `${name} → ${JSON.stringify(change)} was accepted`);
    assert.match(refusal.message, /persistentVolumeClaimSpec cannot be added or removed/);
  }
  assert.equal(await patch('plain', { size: 3 }), undefined, 'other changes pass');
});

test('a volume\'s storage request may grow but not shrink below what the claims hold, and the version moves one minor at a time, up or down, on an existing EtcdCluster', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, etcdClusterCrd());
  const namespace = await testNamespace(t, 'daytwo');
  const volume = (storage: string): unknown => ({ persistentVolumeClaimSpec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
  await transport.call('POST', collection(namespace), manifest('grown', { size: 1, version: '3.5.35', pod: volume('1Gi') }));
  const patch = (spec: unknown): Promise<unknown> =>
    transport.call('PATCH', `${collection(namespace)}/grown`, { spec }, 'application/merge-patch+json').then(() => undefined, (e: unknown) => e);
  assert.equal(await patch({ pod: volume('2Gi') }), undefined, 'a larger request passes');
  assert.equal(await patch({ pod: volume('2048Mi') }), undefined, 'the same size written otherwise passes');
  const shrink = await patch({ pod: volume('1536Mi') });
  assert.ok(shrink instanceof ApiError, 'a smaller request was accepted');
  assert.match(shrink.message, /spec\.pod\.persistentVolumeClaimSpec\.resources\.requests\.storage: Invalid value: the storage request cannot go below 2048Mi, what the members' claims hold/);
  // A raise the StorageClass refused left the claims at 1Gi (status says so): taking it back is no shrink of theirs.
  await transport.call('PATCH', `${collection(namespace)}/grown/status`, { status: { claimedStorage: '1Gi' } }, 'application/merge-patch+json');
  const below = await patch({ pod: volume('512Mi') });
  assert.ok(below instanceof ApiError, 'a request below the claims was accepted');
  assert.match(below.message, /status\.claimedStorage/);
  assert.equal(await patch({ pod: volume('1024Mi') }), undefined, 'back to the size the claims hold');
  assert.equal(await patch({ version: '3.6.5' }), undefined, 'one minor up');
  assert.equal(await patch({ version: '3.5.35' }), undefined, 'one minor down');
  const notAVersion = await patch({ version: 'latest' });
  assert.ok(notAVersion instanceof ApiError, 'latest was accepted');
  assert.doesNotMatch(notAVersion.message, /type conversion error/, 'refused by the pattern alone, without an internal-looking error');
  for (const version of ['3.7.0', '4.0.0']) {
    const jump = await patch({ version });
    assert.ok(jump instanceof ApiError, `3.5.35 → ${version} was accepted`);
    assert.match(jump.message, new RegExp(`etcd cannot go from 3\\.5\\.35 to ${version.replace(/\./g, '\\.')}: it changes one minor version at a time`));
  }
});

test('EtcdCluster has the scale subresource and printer columns', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, etcdClusterCrd());
  const namespace = await testNamespace(t, 'scale');
  await transport.call('POST', collection(namespace), manifest('example', { size: 3 }));

  const kubectl = (...args: string[]): string =>
    execFileSync(lab().kubectl, ['--kubeconfig', lab().kubeconfig, '-n', namespace, ...args], { encoding: 'utf8', timeout: 30_000 });
  kubectl('scale', 'etcd/example', '--replicas=5');
  const scaled = (await transport.call('GET', `${collection(namespace)}/example`)) as EtcdCluster;
  assert.equal(scaled.spec.size, 5);
  const scale = (await transport.call('GET', `${collection(namespace)}/example/scale`)) as { spec?: { replicas?: number } };
  assert.equal(scale.spec?.replicas, 5);
  assert.match(kubectl('get', 'etcd').split('\n')[0] ?? '', /^NAME\s+SIZE\s+READY\s+VERSION\s+PHASE\s+AGE$/);
  // The short name alone names one kind (a category of the same name would expand to all three).
  assert.equal(kubectl('get', 'etcd', 'example', '-o', 'name').trim(), 'etcdcluster.etcd.database.coreos.com/example');
});

test('kubectl apply of an invalid EtcdCluster fails naming the field, and creates nothing', async (t) => {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, etcdClusterCrd());
  const namespace = await testNamespace(t, 'kubectl');
  const cases: [string, string, RegExp][] = [
    ['zero', 'size: 0', /spec\.size: Invalid value: 0/],
    ['negative', 'size: -1', /spec\.size: Invalid value: -1/],
    ['banana', 'size: 3\n  version: banana', /spec\.version: Invalid value: "banana"/],
    ['reserved', 'size: 3\n  pod:\n    labels:\n      app: mine', /spec\.pod\.labels: Invalid value: .*reserved/],
  ];
  for (const [name, spec, why] of cases) {
    const manifest = `apiVersion: ${GROUP}/${VERSION}\nkind: EtcdCluster\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  ${spec}\n`;
    let stderr = '';
    try {
      execFileSync(lab().kubectl, ['--kubeconfig', lab().kubeconfig, 'apply', '-f', '-'], { input: manifest, encoding: 'utf8', stdio: 'pipe', timeout: 30_000 });
    } catch (err) {
      stderr = String((err as { stderr?: unknown }).stderr);
    }
    assert.match(stderr, why, name);
  }
  const list = (await transport.call('GET', collection(namespace))) as { items: unknown[] };
  assert.equal(list.items.length, 0, 'nothing was created');
});
