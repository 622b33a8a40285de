import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import type { EtcdBackup, EtcdRestore } from '../../src/api/etcd-backup.js';
import { ApiError } from '../../src/runtime/transport.js';
import { eventually } from '../support/lab.js';
import { settledPods, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { counterTotal } from '../support/process-usage.js';

type Kind = 'EtcdCluster' | 'EtcdBackup' | 'EtcdRestore';
const plural = { EtcdCluster: 'etcdclusters', EtcdBackup: 'etcdbackups', EtcdRestore: 'etcdrestores' } as const;
const s3 = { path: 'bucket/key.db', awsSecret: 'aws' };
const many = (n: number, f: (i: number) => [string, string]): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => f(i)));

/** Malformed and hostile objects, each refused at admission with a message naming the field. */
const refused: [Kind, string, unknown, RegExp][] = [
  ['EtcdCluster', 'size-string', { size: 'three' }, /spec\.size: Invalid value: "string"/],
  ['EtcdCluster', 'size-huge', { size: 1_000_000 }, /spec\.size: Invalid value: 1000000: spec\.size in body should be less than or equal to 9/],
  ['EtcdCluster', 'size-fraction', { size: 2.5 }, /spec\.size: Invalid value: "number"/],
  ['EtcdCluster', 'size-missing', { version: '3.5.17' }, /spec\.size: Required value/],
  ['EtcdCluster', 'no-spec', undefined, /spec: Required value/],
  ['EtcdCluster', 'version-shell', { size: 3, version: '3.5.17; rm -rf /' }, /spec\.version: Invalid value/],
  ['EtcdCluster', 'version-huge', { size: 3, version: '3'.repeat(100_000) }, /spec\.version: Too long/],
  ['EtcdCluster', 'unknown-field', { size: 3, sizee: 5 }, /unknown field "spec\.sizee"/],
  ['EtcdCluster', 'unknown-pod-field', { size: 3, pod: { hostNetwork: true } }, /unknown field "spec\.pod\.hostNetwork"/],
  ['EtcdCluster', 'label-app', { size: 3, pod: { labels: { app: 'x' } } }, /spec\.pod\.labels: Invalid value.*reserved for the operator/],
  ['EtcdCluster', 'label-value-newline', { size: 3, pod: { labels: { team: 'a\nb' } } }, /spec\.pod\.labels\.team: Invalid value/],
  ['EtcdCluster', 'label-value-long', { size: 3, pod: { labels: { team: 'x'.repeat(64) } } }, /spec\.pod\.labels\.team: Too long/],
  ['EtcdCluster', 'label-key-injection', { size: 3, pod: { labels: { 'a b/c"d': 'x' } } }, /spec\.pod\.labels: Invalid value.*label key/],
  ['EtcdCluster', 'node-selector-key', { size: 3, pod: { nodeSelector: { '-bad': 'x' } } }, /spec\.pod\.nodeSelector: Invalid value.*label key/],
  ['EtcdCluster', 'annotations-flood', { size: 3, pod: { annotations: many(65, (i) => [`a${i}`, 'x']) } }, /spec\.pod\.annotations: Too many: 65: must have at most 64 items/],
  ['EtcdCluster', 'env-data-dir', { size: 3, pod: { etcdEnv: [{ name: 'ETCD_DATA_DIR', value: '/' }] } }, /spec\.pod\.etcdEnv\[0\]: Invalid value.*may not set ETCD_DATA_DIR:/],
  ['EtcdCluster', 'env-flood', { size: 3, pod: { etcdEnv: Array.from({ length: 65 }, (_, i) => ({ name: `E${i}`, value: 'x' })) } }, /spec\.pod\.etcdEnv: Too many: 65/],
  ['EtcdCluster', 'repository-long', { size: 3, repository: 'r'.repeat(600) }, /spec\.repository: Too long/],
  ['EtcdCluster', 'tls-both', { size: 3, TLS: { auto: true, static: { member: { peerSecret: 'a', serverSecret: 'b' }, operatorSecret: 'c' } } }, /spec\.TLS: Invalid value.*either TLS\.static or TLS\.auto/],
  ['EtcdCluster', 'tls-secret-traversal', { size: 3, TLS: { static: { member: { peerSecret: '../../etc', serverSecret: 'b' }, operatorSecret: 'c' } } }, /spec\.TLS\.static\.member\.peerSecret: Invalid value/],
  ['EtcdCluster', 'quota-negative', { size: 3, quotaBackendBytes: -1 }, /spec\.quotaBackendBytes: Invalid value/],
  ['EtcdCluster', 'defrag-percent', { size: 3, defragmentation: { unusedPercent: 150 } }, /spec\.defragmentation\.unusedPercent: Invalid value/],
  ['EtcdCluster', 'survivor-injection', { size: 3, pod: { persistentVolumeClaimSpec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }, restorePolicy: { fromSurvivor: 'x; rm -rf /' } },
    /spec\.restorePolicy\.fromSurvivor: Invalid value/],
  ['EtcdCluster', 'survivor-without-volumes', { size: 3, restorePolicy: { fromSurvivor: 'auto' } }, /spec: Invalid value.*fromSurvivor needs members on volumes/],
  ['EtcdBackup', 'storage-ftp', { clusterName: 'healthy', storageType: 'FTP' }, /spec\.storageType: Unsupported value: "FTP"/],
  ['EtcdBackup', 'two-sources', { clusterName: 'healthy', etcdEndpoints: ['http://x:2379'], storageType: 'S3', s3 }, /spec: Invalid value.*clusterName or etcdEndpoints/],
  ['EtcdBackup', 'no-source', { storageType: 'S3', s3 }, /spec: Invalid value.*clusterName or etcdEndpoints/],
  ['EtcdBackup', 's3-missing', { clusterName: 'healthy', storageType: 'S3' }, /spec: Invalid value.*storageType S3 needs s3/],
  ['EtcdBackup', 's3-traversal', { clusterName: 'healthy', storageType: 'S3', s3: { ...s3, path: 'bucket/../../etc/passwd' } }, /spec\.s3\.path: Invalid value.*"\.\." segments/],
  ['EtcdBackup', 's3-no-bucket', { clusterName: 'healthy', storageType: 'S3', s3: { ...s3, path: '../x' } }, /spec\.s3\.path: Invalid value/],
  ['EtcdBackup', 'volume-absolute', { clusterName: 'healthy', storageType: 'Volume', volume: { claimName: 'c', path: '/etc/shadow' } }, /spec\.volume\.path: Invalid value.*may not start with "\/"/],
  ['EtcdBackup', 'endpoint-file', { etcdEndpoints: ['file:///etc/passwd'], storageType: 'S3', s3 }, /spec\.etcdEndpoints\[0\]: Invalid value/],
  ['EtcdBackup', 'interval-negative', { clusterName: 'healthy', storageType: 'S3', s3, backupPolicy: { backupIntervalInSecond: -5 } }, /spec\.backupPolicy\.backupIntervalInSecond: Invalid value/],
  ['EtcdBackup', 'max-backups-string', { clusterName: 'healthy', storageType: 'S3', s3, backupPolicy: { maxBackups: 'many' } }, /spec\.backupPolicy\.maxBackups: Invalid value: "string"/],
  ['EtcdBackup', 'timeout-zero', { clusterName: 'healthy', storageType: 'S3', s3, backupPolicy: { timeoutInSecond: 0 } }, /spec\.backupPolicy\.timeoutInSecond: Invalid value/],
  ['EtcdBackup', 'retention-short', { clusterName: 'healthy', storageType: 'S3', s3, backupPolicy: { retention: [{ everySeconds: 86400, forSeconds: 3600 }] } },
    /spec\.backupPolicy\.retention\[0\]: Invalid value.*forSeconds must be at least everySeconds/],
  ['EtcdBackup', 'continuous-volume', { clusterName: 'healthy', storageType: 'Volume', volume: { claimName: 'c', path: 'x.db' }, backupPolicy: { backupIntervalInSecond: 60 }, continuous: {} },
    /spec: Invalid value.*continuous backup is kept in S3/],
  ['EtcdBackup', 'continuous-one-shot', { clusterName: 'healthy', storageType: 'S3', s3, continuous: { chunkSeconds: 5 } }, /spec: Invalid value.*continuous backup needs periodic full snapshots/],
  ['EtcdBackup', 'continuous-chunk-zero', { clusterName: 'healthy', storageType: 'S3', s3, backupPolicy: { backupIntervalInSecond: 60 }, continuous: { chunkSeconds: 0 } },
    /spec\.continuous\.chunkSeconds: Invalid value/],
  ['EtcdRestore', 'point-both', { etcdCluster: { name: 'x' }, backupStorageType: 'S3', s3, pointInTime: { revision: 5, time: '2026-11-24T00:00:00Z' } },
    /spec\.pointInTime: Invalid value.*name either revision or time/],
  ['EtcdRestore', 'point-volume', { etcdCluster: { name: 'x' }, backupStorageType: 'Volume', volume: { claimName: 'c', path: 'x.db' }, pointInTime: { revision: 5 } },
    /spec: Invalid value.*point-in-time restore reads a continuous backup, which is kept in S3/],
  ['EtcdRestore', 'point-time-text', { etcdCluster: { name: 'x' }, backupStorageType: 'S3', s3, pointInTime: { time: 'yesterday' } }, /spec\.pointInTime\.time: Invalid value/],
  ['EtcdRestore', 'no-cluster', { backupStorageType: 'S3', s3 }, /spec\.etcdCluster: Required value/],
  ['EtcdRestore', 'cluster-name', { etcdCluster: { name: 'Bad_Name' }, backupStorageType: 'S3', s3 }, /spec\.etcdCluster\.name: Invalid value/],
  ['EtcdRestore', 'volume-missing', { etcdCluster: { name: 'x' }, backupStorageType: 'Volume' }, /spec: Invalid value.*storageType Volume needs volume/],
  ['EtcdRestore', 'cluster-spec-size', { etcdCluster: { name: 'x' }, backupStorageType: 'S3', s3, clusterSpec: { size: 0 } }, /spec\.clusterSpec\.size: Invalid value/],
  ['EtcdRestore', 'bump-negative', { etcdCluster: { name: 'x' }, backupStorageType: 'S3', s3, revisionBump: -1 }, /spec\.revisionBump: Invalid value/],
  ['EtcdRestore', 'bump-old-etcdutl', { etcdCluster: { name: 'x' }, backupStorageType: 'S3', s3, clusterSpec: { size: 1, version: '3.5.9' } },
    /spec: Invalid value.*etcdutl before 3\.5\.10 cannot bump the restored revision: set revisionBump: 0/],
  ['EtcdRestore', 'secret-traversal', { etcdCluster: { name: 'x' }, backupStorageType: 'S3', s3: { ...s3, awsSecret: '../x' } }, /spec\.s3\.awsSecret: Invalid value/],
];

test(`chaos: ${refused.length} malformed or hostile objects are refused naming the field; what only the controller can tell becomes a condition; the operator neither crashes nor hot-loops nor touches a healthy cluster`, async (t) => {
  assert.ok(refused.length >= 30);
  const bed = await testbed(t, 'badinput');
  const operator = startOperator(t, bed.namespace);
  const base = `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}`;
  const create = (kind: Kind, name: string, spec: unknown): Promise<unknown> =>
    // As kubectl does: strict field validation, so an unknown field is an error rather than silently dropped.
    bed.transport.call('POST', `${base}/${plural[kind]}?fieldValidation=Strict`, { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name }, ...(spec === undefined ? {} : { spec }) });
  await bed.create('healthy', { size: 3 });
  const healthyPods = await eventually('a healthy cluster', 120_000, async () => settledPods(bed.core, await bed.get('healthy'), 3));
  const uids = healthyPods.map((p) => p.metadata?.uid).sort();

  for (const [kind, name, spec, why] of refused) {
    const err = await create(kind, name, spec).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof ApiError, `${kind} ${name} was accepted`);
    assert.ok(err.status === 422 || err.status === 400, `${kind} ${name}: HTTP ${err.status}`);
    assert.match(err.message, why, `${kind} ${name}`);
  }

  // Only the controller can tell these: a Secret or cluster that does not exist.
  await create('EtcdCluster', 'no-secrets', { size: 1, TLS: { static: { member: { peerSecret: 'nope-peer', serverSecret: 'nope-server' }, operatorSecret: 'nope-client' } } });
  await create('EtcdBackup', 'no-cluster', { clusterName: 'does-not-exist', storageType: 'S3', s3 });
  await create('EtcdBackup', 'no-aws-secret', { clusterName: 'healthy', storageType: 'S3', s3: { ...s3, awsSecret: 'absent' } });
  await create('EtcdRestore', 'no-backup-secret', { etcdCluster: { name: 'restored' }, backupStorageType: 'S3', s3: { ...s3, awsSecret: 'absent' } });
  const get = async <T>(kind: Kind, name: string): Promise<T> => (await bed.transport.call('GET', `${base}/${plural[kind]}/${name}`)) as T;
  await eventually('the cluster without its Secrets Degraded', 60_000, async () => {
    const c = await get<EtcdCluster>('EtcdCluster', 'no-secrets');
    return c.status?.conditions?.some((x) => x.type === 'Degraded' && x.status === 'True' && x.reason === 'SecretMissing') ? true : undefined;
  });
  for (const [name, reason] of [['no-cluster', 'ClusterNotFound'], ['no-aws-secret', 'SecretMissing']] as const) {
    await eventually(`backup ${name}: ${reason}`, 60_000, async () => {
      const b = await get<EtcdBackup>('EtcdBackup', name);
      return b.status?.succeeded === false && b.status.conditions?.some((x) => x.reason === reason) ? true : undefined;
    });
  }
  await eventually('restore without its Secret: Failed', 60_000, async () => {
    const r = await get<EtcdRestore>('EtcdRestore', 'no-backup-secret');
    return r.status?.phase === 'Failed' && r.status.reason === 'SecretMissing' ? true : undefined;
  });

  // A configuration the user must fix is retried on a slow clock (30 s), not in a loop: over 35 s each failing
  // object comes back about once, and the requeues show in the metrics.
  const metrics = async (): Promise<string> => (await fetch(await operator.metricsUrl())).text();
  const before = counterTotal(await metrics(), 'controller_runtime_reconcile_total');
  await new Promise((r) => setTimeout(r, 35_000));
  const text = await metrics();
  const during = counterTotal(text, 'controller_runtime_reconcile_total') - before;
  t.diagnostic(`${during} reconciles in 35 s with 4 failing objects and a healthy cluster`);
  assert.ok(during >= 3 && during < 40, `retried, without a hot loop: ${during} reconciles in 35 s`);
  assert.match(text, /^controller_runtime_reconcile_total\{controller="etcdbackup",result="requeue_after"\} [1-9]/m, 'requeues visible in the metrics');
  assert.ok(operator.logs.every((l) => !l.includes('"level":"fatal"')), 'no fatal error');
  assert.equal((await settledPods(bed.core, await bed.get('healthy'), 3))?.map((p) => p.metadata?.uid).sort().join(), uids.join(), 'the healthy cluster untouched');
  const clusters = ((await bed.transport.call('GET', `${base}/etcdclusters`)) as { items: EtcdCluster[] }).items.map((c) => c.metadata.name).sort();
  assert.deepEqual(clusters, ['healthy', 'no-secrets'], 'nothing else was created, no restore target made without its backup');
  operator.succeeded();
});
