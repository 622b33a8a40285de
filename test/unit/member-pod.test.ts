import { test } from 'node:test';
import assert from 'node:assert/strict';
import { METRICS_PORT, WHOLE_DATABASE_PASS_SECONDS, configDigest, corruptionCheckFlags, memberPod, memberProbes, TIDY_STEP } from '../../src/k8s/member-pod.js';
import { podView } from '../../src/controllers/cluster/views.js';
import { imageOf, RESERVED_ETCD_ENV } from '../../src/api/etcd-cluster.js';
import type { ClusterSpec } from '../../src/api/etcd-cluster.js';
import type { V1Probe } from '@kubernetes/client-node';
import { clusterAddress, memberAltNames, tlsSecretNames } from '../../src/k8s/tls-secrets.js';
import { snapshotPod } from '../../src/k8s/snapshot-pod.js';
import { budgetChange, budgetMinAvailable, memberDisruptionBudget } from '../../src/k8s/disruption-budget.js';
import type { MemberPodInput } from '../../src/k8s/member-pod.js';
import { initialCluster, memberOfPeerUrl, newMemberName, peerUrl } from '../../src/etcd/identity.js';
import type { ClusterAddress } from '../../src/etcd/identity.js';

const address: ClusterAddress = { cluster: 'example', namespace: 'prod', domain: 'cluster.local', tls: false };
const input = (o: Partial<MemberPodInput> = {}): MemberPodInput => ({
  address, clusterUid: 'uid-1', spec: { size: 3, version: '3.5.17', repository: 'quay.io/coreos/etcd' }, specGeneration: 1,
  member: 'example-0a1b2c3d', version: '3.5.17', state: 'existing', initialCluster: 'x', token: 'uid-1', withClaim: false, operator: { image: 'etcd-operator:dev', corruptCheckSeconds: 600 }, expectData: false, ...o,
});

test('member identity: fresh names, peer URLs on the headless Service, and back', () => {
  const name = newMemberName('example');
  assert.match(name, /^example-[0-9a-f]{8}$/);
  assert.notEqual(newMemberName('example'), name);
  assert.equal(peerUrl(address, name), `http://${name}.example.prod.svc.cluster.local:2380`);
  assert.equal(memberOfPeerUrl(peerUrl(address, name)), name);
  assert.equal(memberOfPeerUrl('http://10.0.0.1:2380'), '10');
  assert.equal(memberOfPeerUrl('not a url'), undefined);
  assert.equal(initialCluster(address, ['a', 'b']), 'a=http://a.example.prod.svc.cluster.local:2380,b=http://b.example.prod.svc.cluster.local:2380');
});

test('the member pod runs etcd with its identity and the cluster token, owned by the cluster', () => {
  const { metadata, spec } = memberPod(input({ state: 'new', initialCluster: 'a=u', bootstrapMembers: ['a', 'b'] }));
  assert.ok(metadata && spec);
  const command = spec.containers[0]?.command ?? [];
  for (const flag of ['--name=example-0a1b2c3d', '--initial-cluster=a=u', '--initial-cluster-state=new', '--initial-cluster-token=uid-1',
    '--initial-advertise-peer-urls=http://example-0a1b2c3d.example.prod.svc.cluster.local:2380']) {
    assert.ok(command.includes(flag), flag);
  }
  assert.equal(spec.hostname, 'example-0a1b2c3d');
  assert.equal(spec.subdomain, 'example');
  assert.equal(spec.enableServiceLinks, false, 'no ETCD_* service-link variables for etcd to misread');
  const [owner] = metadata.ownerReferences ?? [];
  assert.ok(owner);
  assert.equal(owner.uid, 'uid-1');
  assert.equal(owner.controller, true);
  assert.equal(metadata.annotations?.['etcd.database.coreos.com/initial-cluster'], 'a,b');
  assert.equal(spec.volumes?.[0]?.emptyDir !== undefined, true);
  assert.equal(memberPod(input({ withClaim: true })).spec?.volumes?.[0]?.persistentVolumeClaim?.claimName, 'example-0a1b2c3d');
});

test('etcd\'s last words are its termination message, and pods made before it are not rolled for it (issue 32, finding 14)', () => {
  const made = memberPod(input({ spec: { size: 3, quotaBackendBytes: 2 ** 30 } }));
  assert.equal(made.spec?.containers[0]?.terminationMessagePolicy, 'FallbackToLogsOnError');
  // A pod an earlier version made, without the field, is on the same settings: nothing rolls on upgrade.
  const earlier = structuredClone(made);
  delete earlier.spec?.containers[0]?.terminationMessagePolicy;
  assert.equal(podView(earlier).config, configDigest({ size: 3, quotaBackendBytes: 2 ** 30 }));
});

test('probes follow the member\'s etcd version: /livez and /readyz from 3.5.11, /health before (issue 33)', () => {
  const paths = (version: string): (string | number | undefined)[] => {
    const p = memberProbes(version);
    return [p.startupProbe, p.livenessProbe, p.readinessProbe].map((x) => x?.httpGet?.path ?? x?.tcpSocket?.port);
  };
  for (const version of ['3.5.11', '3.5.17', '3.5.35', '3.6.5', 'v3.6.5']) assert.deepEqual(paths(version), ['/livez', '/livez', '/readyz'], version);
  const serializable = '/health?serializable=true&exclude=NOSPACE&exclude=CORRUPT';
  assert.deepEqual(paths('3.5.10'), [serializable, serializable, '/health?exclude=NOSPACE'], 'before /livez: /health read locally, alarms aside');
  assert.deepEqual(paths('3.5.2'), [METRICS_PORT, METRICS_PORT, '/health?exclude=NOSPACE'], 'before serializable=true: the metrics listener accepts');
  const pod = memberPod(input({ version: '3.6.5' }));
  const { startupProbe, livenessProbe, readinessProbe } = pod.spec?.containers[0] ?? {};
  assert.deepEqual({ startupProbe, livenessProbe, readinessProbe }, memberProbes('3.6.5'), 'the pod carries its version\'s probes');
});

test('no probe but readiness needs a leader; liveness waits out a whole-database pass; readiness needs three slow answers (issue 33)', () => {
  const askedLocally = (p: V1Probe | undefined): boolean => p?.tcpSocket !== undefined || p?.httpGet?.path === '/livez' || (p?.httpGet?.path ?? '').includes('serializable=true');
  const windowSeconds = (p: V1Probe | undefined): number => (p?.periodSeconds ?? 10) * (p?.failureThreshold ?? 3);
  for (const version of ['3.5.0', '3.5.2', '3.5.3', '3.5.10', '3.5.11', '3.5.18', '3.5.19', '3.5.35', '3.6.0', '3.6.5', '3.7.0', 'x']) {
    const { startupProbe, livenessProbe, readinessProbe } = memberProbes(version);
    for (const p of [startupProbe, livenessProbe, readinessProbe]) {
      assert.equal(p?.httpGet?.port ?? p?.tcpSocket?.port, METRICS_PORT, `${version}: on the plain metrics listener, TLS or not`);
    }
    assert.ok(askedLocally(startupProbe) && askedLocally(livenessProbe), `${version}: a lost quorum restarts no member`);
    assert.ok(windowSeconds(startupProbe) >= WHOLE_DATABASE_PASS_SECONDS, `${version}: a long replay is not killed`);
    assert.ok(windowSeconds(livenessProbe) >= WHOLE_DATABASE_PASS_SECONDS, `${version}: nor a defragmentation the operator waits for`);
    assert.ok((readinessProbe?.timeoutSeconds ?? 1) >= 5 && (readinessProbe?.failureThreshold ?? 1) >= 3, `${version}: one slow answer does not drop a member`);
    assert.ok(windowSeconds(readinessProbe) <= 10, `${version}: a member that fails fast leaves the Service within 10 s`);
  }
});

test('pods made with earlier probes are on the same settings: upgrading the operator rolls no member (issue 33)', () => {
  const made = memberPod(input({ spec: { size: 3, quotaBackendBytes: 2 ** 30 } }));
  const earlier = structuredClone(made);
  const [etcd] = earlier.spec?.containers ?? [];
  assert.ok(etcd);
  delete etcd.startupProbe;
  etcd.readinessProbe = { httpGet: { path: '/health?exclude=NOSPACE', port: METRICS_PORT }, periodSeconds: 2, failureThreshold: 3 };
  etcd.livenessProbe = { tcpSocket: { port: 2380 }, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 3 };
  assert.equal(podView(earlier).config, podView(made).config);
});

test('the image is the spec repository tagged with the v-prefixed version the member runs', () => {
  assert.equal(imageOf({ size: 1, repository: 'r.example/etcd' }, '3.6.5'), 'r.example/etcd:v3.6.5');
  assert.equal(imageOf({ size: 1 }, '3.5.17'), 'quay.io/coreos/etcd:v3.5.17', 'the default repository, as the API server would apply it');
  const pod = memberPod(input({ version: '3.6.5' }));
  assert.equal(pod.spec?.containers[0]?.image, 'quay.io/coreos/etcd:v3.6.5');
  assert.equal(pod.metadata?.annotations?.['etcd.version'], '3.6.5', 'the version is recorded for the rollout');
});

test('user labels and annotations are kept, the operator’s own win; CoreOS antiAffinity becomes an affinity', () => {
  const { metadata, spec } = memberPod(input({ spec: { size: 3, version: '3.5.17', pod: { labels: { team: 'db' }, annotations: { a: 'b' }, antiAffinity: true } } }));
  assert.ok(metadata && spec);
  assert.deepEqual(metadata.labels, { team: 'db', app: 'etcd', etcd_cluster: 'example' });
  assert.equal(metadata.annotations?.a, 'b');
  const term = spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0];
  assert.deepEqual(term?.labelSelector?.matchLabels, { app: 'etcd', etcd_cluster: 'example' });
  const explicit = { nodeAffinity: {} };
  assert.equal(memberPod(input({ spec: { size: 3, pod: { antiAffinity: true, affinity: explicit } } })).spec?.affinity, explicit);
});

test('members spread over zones, then nodes, at most one apart: a preference by default, a rule when Required; an explicit affinity is the placement', () => {
  const spread = (pod: ClusterSpec['pod']): { topologyKey: string; whenUnsatisfiable: string; maxSkew: number }[] | undefined =>
    memberPod(input({ spec: { size: 3, ...(pod ? { pod } : {}) } })).spec?.topologySpreadConstraints;
  assert.deepEqual(spread(undefined)?.map((c) => [c.topologyKey, c.whenUnsatisfiable, c.maxSkew]),
    [['topology.kubernetes.io/zone', 'ScheduleAnyway', 1], ['kubernetes.io/hostname', 'ScheduleAnyway', 1]]);
  assert.deepEqual(spread({ spread: 'Required' })?.map((c) => c.whenUnsatisfiable), ['DoNotSchedule', 'DoNotSchedule']);
  assert.equal(spread({ affinity: { nodeAffinity: {} } }), undefined);
  assert.equal(memberPod(input()).spec?.affinity, undefined, 'no anti-affinity unless asked: a fourth member on three nodes still schedules');
});

test('the disruption budget refuses the eviction of any member, ready or not, even while a replacement has joined (the operator moves members off drained nodes)', () => {
  const budget = memberDisruptionBudget({ cluster: 'ex', namespace: 'ns', domain: 'cluster.local', tls: false }, 'u', budgetMinAvailable(3, 4));
  assert.equal(budget.spec?.minAvailable, 5, 'one more than the members there can be: none is spare');
  assert.equal(budget.spec.unhealthyPodEvictionPolicy, 'IfHealthyBudget', 'nor an unready one: leadership moves make a member unready for a moment');
  assert.equal(budgetMinAvailable(5, 3), 6, 'the desired size while scaling up');
  assert.equal(budgetChange(budget, 5), undefined);
  assert.deepEqual(budgetChange(budget, 4), { spec: { minAvailable: 4, maxUnavailable: null, unhealthyPodEvictionPolicy: 'IfHealthyBudget' } });
  assert.notEqual(budgetChange({ spec: { minAvailable: 5 } }, 5), undefined, 'an earlier version\'s budget is brought to these terms');
});

test('settings become etcd flags and a digest; a spec without settings has the empty digest of older pods', () => {
  const plain = memberPod(input());
  assert.equal(plain.metadata?.annotations?.['etcd.database.coreos.com/config'], '');
  const spec = { size: 3, quotaBackendBytes: 8388608, autoCompaction: { mode: 'periodic' as const, retention: '1h' } };
  const pod = memberPod(input({ spec }));
  const command = pod.spec?.containers[0]?.command ?? [];
  for (const flag of ['--quota-backend-bytes=8388608', '--auto-compaction-mode=periodic', '--auto-compaction-retention=1h']) assert.ok(command.includes(flag), flag);
  assert.match(pod.metadata?.annotations?.['etcd.database.coreos.com/config'] ?? '', /^[0-9a-f]{16}$/);
  assert.notEqual(configDigest(spec), configDigest({ ...spec, quotaBackendBytes: 16777216 }));
});

test('corruption checks are on, under each version’s flag names, at the period the operator was given', () => {
  assert.ok(corruptionCheckFlags('3.5.17', 600).includes('--experimental-initial-corrupt-check=true'));
  assert.ok(corruptionCheckFlags('3.6.5', 600).includes('--feature-gates=InitialCorruptCheck=true,CompactHashCheck=true'));
  assert.ok(memberPod(input({ version: '3.6.5' })).spec?.containers[0]?.command?.includes('--corrupt-check-time=600s'));
  assert.ok(memberPod(input({ operator: { image: 'op:1', corruptCheckSeconds: 15 } })).spec?.containers[0]?.command?.includes('--experimental-corrupt-check-time=15s'));
});

test('a TLS member mounts its Secrets at the CoreOS paths, serves https only to certificate holders, and rolls when certificates are reissued', () => {
  const tlsAddress = { ...address, tls: true };
  const secrets = tlsSecretNames('example', { size: 3, TLS: { auto: true } });
  assert.deepEqual(secrets, { peer: 'example-peer-tls', server: 'example-server-tls', operator: 'example-client-tls', auto: true });
  assert.ok(secrets);
  const pod = memberPod(input({ address: tlsAddress, tls: { secrets, generation: 'g1' } }));
  const container = pod.spec?.containers[0];
  const command = container?.command ?? [];
  for (const flag of ['--client-cert-auth=true', '--peer-client-cert-auth=true', '--cert-file=/etc/etcdtls/member/server-tls/server.crt',
    '--peer-trusted-ca-file=/etc/etcdtls/member/peer-tls/peer-ca.crt', '--listen-client-urls=https://0.0.0.0:2379']) assert.ok(command.includes(flag), flag);
  assert.ok(command.some((f) => f.startsWith('--initial-advertise-peer-urls=https://')));
  assert.deepEqual(pod.spec?.volumes?.slice(1).map((v) => v.secret?.secretName), ['example-peer-tls', 'example-server-tls']);
  assert.equal(container?.readinessProbe?.httpGet?.port, 8080, 'readiness stays on the plain metrics port');
  const spec = { size: 3 };
  assert.notEqual(configDigest(spec, { secrets, generation: 'g1' }), configDigest(spec, { secrets, generation: 'g2' }), 'a renewal rolls');
  assert.deepEqual(tlsSecretNames('example', { size: 3, TLS: { static: { member: { peerSecret: 'p', serverSecret: 's' }, operatorSecret: 'o' } } }),
    { peer: 'p', server: 's', operator: 'o', auto: false });
  assert.equal(tlsSecretNames('example', { size: 3 }), undefined);
});

test('member certificates name every member under the headless Service and the client Service', () => {
  const names = memberAltNames(address);
  for (const n of ['*.example.prod.svc', '*.example.prod.svc.cluster.local', 'example-client.prod.svc', 'example-client.prod.svc.cluster.local', '127.0.0.1']) {
    assert.ok(names.includes(n), n);
  }
});

test('a restored bootstrap member fetches and checks the snapshot with the operator image, etcdutl makes its data directory through the link, and the snapshot is removed', () => {
  const pod = memberPod(input({ state: 'new', initialCluster: 'ic', restore: { s3: { path: 'b/k', awsSecret: 'aws', endpoint: 'http://s3', forcePathStyle: true } } }));
  const [fetch, restore, tidy] = pod.spec?.initContainers ?? [];
  assert.ok(fetch && restore && tidy);
  assert.equal(fetch.image, 'etcd-operator:dev');
  // The snapshot and both links on the scratch volume; only the record of a complete restore beside the data.
  const target = ['--to', '/var/etcd-restore-scratch/restore.db', '--into', '/var/etcd-restore-scratch/into', '--scratch', '/var/etcd-restore-scratch/copy', '--complete', '/var/etcd/restore-complete'];
  assert.deepEqual(fetch.args, ['snapshot', 'fetch', ...target, '--data-dir', '/var/etcd/data', '--s3-path', 'b/k', '--aws-dir', '/etc/etcd-backup/aws', '--s3-endpoint', 'http://s3', '--force-path-style']);
  // Node's young generation kept small for the stream (streamNodeEnv: 2.1-2.3 s against 2.7-2.9 for 1.2 GB).
  assert.deepEqual(fetch.env, [{ name: 'NODE_OPTIONS', value: '--max-semi-space-size=1' }]);
  assert.equal(restore.image, 'quay.io/coreos/etcd:v3.5.17');
  assert.ok(restore.command?.includes('--data-dir=/var/etcd-restore-scratch/into') && restore.command.includes('/var/etcd-restore-scratch/restore.db') && restore.command.includes('--initial-cluster=ic') && restore.command.includes('--name=example-0a1b2c3d'));
  assert.ok(restore.command?.includes('--skip-hash-check'), 'the fetch step checked the hash; the member\'s own database has none');
  assert.deepEqual([tidy.name, tidy.image, tidy.args], ['tidy-restore', 'etcd-operator:dev', ['snapshot', 'tidy', ...target]]);
  // The scratch is on the node's disk, mounted into all three; never on the member's claim.
  for (const step of [fetch, restore, tidy]) assert.ok(step.volumeMounts?.some((m) => m.name === 'restore-scratch' && m.mountPath === '/var/etcd-restore-scratch'), step.name);
  const volumes = pod.spec?.volumes ?? [];
  assert.equal(volumes.find((v) => v.name === 'backup-source')?.secret?.secretName, 'aws');
  assert.deepEqual(volumes.find((v) => v.name === 'restore-scratch')?.emptyDir, {});
  const fromVolume = memberPod(input({ restore: { volume: { claimName: 'backups', path: 'a/b.db' } } }));
  assert.equal(fromVolume.spec?.volumes?.find((v) => v.name === 'backup-source')?.persistentVolumeClaim?.readOnly, true);
  assert.ok(!fromVolume.spec.volumes.some((v) => v.name === 'backup-keys'), 'no keys unless asked');
  // An encrypted backup: the key Secret is mounted read-only into the fetch step, which opens the object with it.
  const sealed = memberPod(input({ restore: { volume: { claimName: 'backups', path: 'a/b.db' }, keySecret: 'backup-keys' } }));
  const sealedFetch = sealed.spec?.initContainers?.[0];
  assert.ok(sealedFetch);
  assert.deepEqual(sealedFetch.args?.slice(-2), ['--key-dir', '/etc/etcd-backup/keys']);
  assert.deepEqual(sealedFetch.volumeMounts?.find((m) => m.name === 'backup-keys'), { name: 'backup-keys', mountPath: '/etc/etcd-backup/keys', readOnly: true });
  assert.equal(sealed.spec?.volumes?.find((v) => v.name === 'backup-keys')?.secret?.secretName, 'backup-keys');
  assert.equal(memberPod(input()).spec?.initContainers, undefined, 'an ordinary member has no init steps');
  assert.ok(!(restore.command ?? []).some((c) => c.startsWith('--bump-revision') || c === '--mark-compacted'), 'no bump unless asked');
});

test('every member pod waits behind the voter gate: Ready (in the client Service) only once the operator has seen it a voter', () => {
  assert.deepEqual(memberPod(input()).spec?.readinessGates, [{ conditionType: 'etcd.database.coreos.com/voter' }]);
});

test('a restore with a revision bump has etcdutl raise the restored revision and mark it compacted', () => {
  const pod = memberPod(input({ state: 'new', initialCluster: 'ic', restore: { s3: { path: 'b/k', awsSecret: 'aws' }, revisionBump: 1_000_000_000 } }));
  const command = pod.spec?.initContainers?.[1]?.command ?? [];
  assert.deepEqual(command.slice(-2), ['--bump-revision=1000000000', '--mark-compacted']);
  const unbumped = memberPod(input({ state: 'new', initialCluster: 'ic', restore: { s3: { path: 'b/k', awsSecret: 'aws' }, revisionBump: 0 } }));
  assert.ok(!unbumped.spec?.initContainers?.[1]?.command?.includes('--mark-compacted'), 'revisionBump 0: the source\'s numbers kept');
});

test('a survivor restarting alone carries --force-new-cluster, marked on the pod', () => {
  const pod = memberPod(input({ forceNewCluster: true }));
  assert.ok(pod.spec?.containers[0]?.command?.includes('--force-new-cluster'));
  assert.equal(pod.metadata?.annotations?.['etcd.database.coreos.com/force-new-cluster'], 'true');
  assert.ok(!memberPod(input()).spec?.containers[0]?.command?.includes('--force-new-cluster'));
});

test('a Volume backup runs once in a pod of the operator image, owned by its EtcdBackup, with the claim, the client certificate and the backup keys mounted', () => {
  const pod = snapshotPod({
    namespace: 'ns', backup: 'nightly', backupUid: 'u1', operatorImage: 'op:1', endpoints: ['https://a:2379', 'https://b:2379'],
    volume: { claimName: 'backups', path: 'x/snap.db' }, tlsSecret: 'ex-client-tls', periodic: true,
    retention: { maxBackups: 3, tiers: [{ everySeconds: 3600, forSeconds: 86400 }, { everySeconds: 86400, forSeconds: 2592000 }] }, timeoutSeconds: 600,
    compression: 'Brotli', encryption: { keySecret: 'backup-keys', keyId: 'k2' },
  });
  assert.match(pod.metadata?.name ?? '', /^nightly-snapshot-[0-9a-f]{8}$/);
  assert.deepEqual(pod.metadata?.ownerReferences?.map((o) => [o.kind, o.uid, o.controller]), [['EtcdBackup', 'u1', true]]);
  assert.equal(pod.spec?.restartPolicy, 'Never');
  assert.equal(pod.spec.activeDeadlineSeconds, 600);
  assert.equal(pod.spec.containers[0]?.command, undefined, 'the image entrypoint runs');
  assert.deepEqual(pod.spec.containers[0]?.env, [{ name: 'NODE_OPTIONS', value: '--max-semi-space-size=1' }], 'a young generation kept small for the stream');
  assert.deepEqual(pod.spec.containers[0].args, [
    'snapshot', 'save', '--endpoints', 'https://a:2379,https://b:2379', '--dir', '/backup', '--name', 'x/snap.db', '--timeout', '600', '--periodic', '--max-backups', '3',
    '--retention', '3600:86400,86400:2592000', '--tls-dir', '/etc/etcd-client-tls', '--compression', 'Brotli', '--key-dir', '/etc/etcd-backup/keys', '--key-id', 'k2',
  ]);
  assert.deepEqual(pod.spec.volumes?.map((v) => v.persistentVolumeClaim?.claimName ?? v.secret?.secretName), ['backups', 'ex-client-tls', 'backup-keys']);
  assert.deepEqual(pod.spec.containers[0].volumeMounts?.map((m) => [m.mountPath, m.readOnly ?? false]), [['/backup', false], ['/etc/etcd-client-tls', true], ['/etc/etcd-backup/keys', true]]);
  const { runAsNonRoot, runAsUser, fsGroup, seccompProfile } = pod.spec.securityContext ?? {};
  assert.deepEqual([runAsNonRoot, runAsUser, fsGroup, seccompProfile?.type], [true, 65532, 65532, 'RuntimeDefault'], 'non-root, the claim writable through fsGroup');
  assert.deepEqual(pod.spec.containers[0].securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
});

test('etcdEnv may set no flag a member pod can get, but the spec settings CoreOS manifests set through it', () => {
  const secrets = tlsSecretNames('example', { size: 3, TLS: { auto: true } });
  assert.ok(secrets);
  const settings = { size: 3, quotaBackendBytes: 8 * 1024 ** 3, autoCompaction: { mode: 'periodic' as const, retention: '1h' } };
  // Every option on, under both families of flag names.
  const flags = new Set(['3.5.17', '3.6.5'].flatMap((version) => memberPod(input({
    version, spec: settings, address: { ...address, tls: true }, tls: { secrets, generation: 'g' }, forceNewCluster: true, state: 'new',
  })).spec?.containers[0]?.command?.slice(1) ?? []).map((arg) => `ETCD_${(arg.split('=')[0] ?? '').replace(/^--/, '').replaceAll('-', '_').toUpperCase()}`));
  const openToEtcdEnv = ['ETCD_QUOTA_BACKEND_BYTES', 'ETCD_AUTO_COMPACTION_MODE', 'ETCD_AUTO_COMPACTION_RETENTION'];
  for (const name of openToEtcdEnv) assert.ok(flags.has(name), `${name} is a flag the spec gives`);
  const reserved: readonly string[] = RESERVED_ETCD_ENV;
  for (const name of flags) assert.ok(reserved.includes(name) || openToEtcdEnv.includes(name), `${name} is reserved`);
  assert.ok(flags.has('ETCD_FORCE_NEW_CLUSTER') && flags.has('ETCD_LISTEN_METRICS_URLS') && flags.has('ETCD_FEATURE_GATES'));
});

test('a member on a volume runs the data guard first (with --expect-data once it has started); one on emptyDir has none', () => {
  const guard = (o: Partial<MemberPodInput>) => memberPod(input(o)).spec?.initContainers?.[0];
  assert.deepEqual(guard({ withClaim: true })?.args, ['data-guard', '--data-dir=/var/etcd/data', '--marker=/var/run/etcd-guard/started', '--leftover=/var/etcd/restore.db']);
  assert.deepEqual(guard({ withClaim: true, expectData: true })?.args?.at(-1), '--expect-data');
  assert.equal(guard({ withClaim: true })?.image, 'etcd-operator:dev');
  const pod = memberPod(input({ withClaim: true, restore: { volume: { claimName: 'backups', path: 'a/b.db' } } }));
  assert.deepEqual(pod.spec?.initContainers?.map((c) => c.name), ['data-guard', 'fetch-snapshot', 'restore-snapshot', 'tidy-restore'], 'the guard runs before a restore writes the data');
  assert.deepEqual(pod.spec.volumes?.find((v) => v.name === 'guard'), { name: 'guard', emptyDir: {} }, 'its marker lives as long as the pod');
  // Restoring: the guard leaves its marker to the tidy step, which writes it once the data is there, as etcd starts.
  const [restoringGuard, , , tidy] = pod.spec.initContainers ?? [];
  assert.equal(restoringGuard?.args?.at(-1), '--marked-later');
  assert.deepEqual(tidy?.args?.slice(-2), ['--started', '/var/run/etcd-guard/started']);
  assert.ok(tidy.volumeMounts?.some((m) => m.name === 'guard' && m.mountPath === '/var/run/etcd-guard'));
  assert.equal(guard({ withClaim: false }), undefined);
});

test('a pod that carries restore steps that run again harmlessly stays; one with an earlier operator\'s one-shot steps is on other settings: once bootstrapped, it rolls', () => {
  const plain = podView(memberPod(input({ withClaim: true })));
  const restoring = memberPod(input({ withClaim: true, restore: { s3: { path: 'b/k', awsSecret: 'aws' } } }));
  assert.equal(podView(restoring).config, plain.config, 'a restored member is not replaced for its steps');
  // An earlier operator's: the same steps without the tidy one, etcdutl writing straight into the data directory.
  const oneShot = structuredClone(restoring);
  if (oneShot.spec) oneShot.spec.initContainers = oneShot.spec.initContainers?.filter((c) => c.name !== TIDY_STEP);
  assert.notEqual(podView(oneShot).config, plain.config, 'a reboot would run its restore steps again, and etcdutl fail for ever: it must not stay');
  assert.equal(plain.config, podView(memberPod(input({ withClaim: true }))).config, 'a plain pod is not rolled for nothing');
});

test('a spec\'s ClusterDomain "" is unset (the CoreOS operator writes its Go zero value into every spec it updates): the operator\'s domain is used', () => {
  assert.equal(clusterAddress('ex', 'ns', { size: 3, pod: { ClusterDomain: '' } }, 'cluster.local').domain, 'cluster.local');
  assert.equal(clusterAddress('ex', 'ns', { size: 3, pod: { ClusterDomain: 'corp.example' } }, 'cluster.local').domain, 'corp.example');
});

test('member pods pass the "restricted" Pod Security Standard: every container, guard and restore steps too; the user\'s security context wins, root only when asked', () => {
  const restricted = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };
  const pod = memberPod(input({ withClaim: true, expectData: true, restore: { volume: { claimName: 'backups', path: 'a/b.db' } } }));
  assert.deepEqual(pod.spec?.securityContext, { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
  assert.ok(pod.spec);
  const containers = [...pod.spec.initContainers ?? [], ...pod.spec.containers];
  assert.deepEqual(containers.map((c) => c.name), ['data-guard', 'fetch-snapshot', 'restore-snapshot', 'tidy-restore', 'etcd']);
  for (const c of containers) assert.deepEqual(c.securityContext, restricted, c.name);
  assert.ok((pod.spec.volumes ?? []).every((v) => v.hostPath === undefined), 'no host paths');
  const spec = (securityContext: object): ClusterSpec => ({ size: 3, version: '3.5.17', pod: { securityContext } });
  const theirs = memberPod(input({ spec: spec({ runAsUser: 1000, fsGroup: 2000 }) })).spec?.securityContext;
  assert.deepEqual([theirs?.runAsUser, theirs?.fsGroup, theirs?.runAsNonRoot, theirs?.seccompProfile?.type], [1000, 2000, true, 'RuntimeDefault']);
  const root = memberPod(input({ spec: spec({ runAsUser: 0 }) })).spec?.securityContext;
  assert.deepEqual([root?.runAsUser, root?.runAsNonRoot], [0, false], 'root asked for is not refused by runAsNonRoot');
});
