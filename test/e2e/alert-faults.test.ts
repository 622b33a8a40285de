// lab: late — needs Prometheus, built last behind a first lab.
// Issue 35, item 2, the operator's alerts that monitoring.test.ts does not reach: a backup that no longer restores
// to the live data, NOSPACE raised over and over and then held by live data, and every pass of the operator
// failing. The same real Prometheus, scrape jobs and rules (holds shortened) as there; clusters of one member,
// which is all these faults need.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import { DEFAULT_INSTALL, NAME } from '../../src/install/manifests.js';
import { chunksOf } from '../../src/storage/change-log.js';
import { followOperatorLogs, installOperator, operatorReady } from '../support/in-cluster.js';
import { testbed } from '../support/cluster-testbed.js';
import { eventually } from '../support/lab.js';
import { startMinio, storedKeys } from '../support/minio.js';
import { createBackup, getBackup } from '../support/backup-bed.js';
import { etcdDeletePrefix, etcdPut, etcdPutMany, etcdStatus } from '../support/etcd-gateway.js';
import { QUICK, startPrometheus, untilFiring, untilResolved } from '../support/prometheus.js';
import { fillQuota, fillUntilQuotaFull } from '../support/quota.js';

/** A Role as JSON (the API client's classes do not spread). */
interface RoleJson { metadata?: Record<string, unknown>; rules?: { resources?: string[] }[] }

test('the operator\'s alerts on a backup that does not restore, on NOSPACE recurring and then held by live data, and on passes that all fail each fire on a real Prometheus and resolve after the heal', async (t) => {
  const bed = await testbed(t, 'alerts');
  const install = (): void => { installOperator({ ...DEFAULT_INSTALL, namespace: bed.namespace, image: 'etcd-operator:dev', imagePullPolicy: 'Never' }); };
  install();
  // Kept where the lab's operator logs go (OPERATOR_LOG_DIR), for a failure to be read.
  const logs = followOperatorLogs(t, bed);
  const logDir = process.env.OPERATOR_LOG_DIR;
  if (logDir) t.after(() => { writeFileSync(join(logDir, `${bed.namespace}.log`), logs.map((r) => r.lines.map((l) => `${r.pod} ${l}`).join('\n')).join('\n')); });
  const minio = await startMinio(t, 'alerts');
  await bed.secret('aws', minio.awsSecretData);
  await operatorReady(bed);
  await bed.create('src', { size: 1 });
  // A quota small enough to fill in seconds (the smallest the schema takes).
  await bed.create('tight', { size: 1, quotaBackendBytes: 1024 * 1024 });
  const prom = await startPrometheus(t, bed.namespace, QUICK);
  await eventually('both clusters settled', 180_000, async () => (await bed.settledMembers('src', 1)) && bed.settledMembers('tight', 1));
  const src = await bed.clientEndpoint('src');
  const tight = await bed.clientEndpoint('tight');
  await eventually('a write through the client Service', 30_000, () => etcdPut(src, 'first', 'x'));

  // 1. A chunk of the change log lost from the store: the newest backup, restored, no longer holds the live data.
  // One snapshot an hour, so that no newer snapshot covers the chunk's revisions.
  await createBackup(bed, 'continuous', {
    clusterName: 'src', storageType: 'S3', s3: { path: 'alerts/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
    backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 }, verification: { intervalInSecond: 60 },
  });
  const snapshot = await eventually('the first snapshot', 120_000, async () => (await getBackup(bed, 'continuous')).status?.etcdRevision);
  await etcdPutMany(src, Array.from({ length: 50 }, (_, i): [string, string] => [`after-snapshot-${i}`, `v${i}`]));
  const written = (await etcdStatus(src)).revision;
  await eventually(`the change log through revision ${written}`, 60_000, async () => ((await getBackup(bed, 'continuous')).status?.changeLog?.throughRevision ?? 0) >= written || undefined);
  const chunks = chunksOf((await storedKeys(minio, 'alerts', 'src.db.changes/')).filter((k) => !k.endsWith('.sha256')), 'src.db');
  const lost = chunks.find((c) => c.to > snapshot);
  assert.ok(lost, `a chunk after revision ${snapshot} among ${chunks.map((c) => c.name).join(', ')}`);
  await minio.client.send(new DeleteObjectCommand({ Bucket: 'alerts', Key: lost.name }));
  const chunkLost = Date.now();

  // 2. Meanwhile (a verification comes once a minute), the small quota: filled by history twice, each time compacted
  // away and disarmed by the operator; then by live data, which only a person frees (deletes: all etcd takes past it).
  // The second waits out the minute the operator leaves between two recoveries.
  for (let round = 1; round <= 2; round++) {
    await fillQuota(tight, () => 'overwritten', 100 * 1024);
    await eventually(`NOSPACE ${round} recovered by the operator`, 150_000, () => etcdPut(tight, 'probe', String(round)).then(() => true, () => undefined));
  }
  t.diagnostic(`NOSPACE twice: EtcdClusterAlarmsRecurring fired after ${await untilFiring(prom, ['EtcdClusterAlarmsRecurring'], 120_000)} ms`);
  await fillUntilQuotaFull(bed, 'tight', tight, 'live/', 240_000);
  const full = ['EtcdClusterAlarm', 'EtcdDatabaseQuotaLowSpace'];
  t.diagnostic(`live data over the quota: ${full.join(', ')} fired after ${await untilFiring(prom, full, 120_000)} ms`);
  assert.ok(await etcdDeletePrefix(tight, 'live/') > 0);
  t.diagnostic(`keys deleted: resolved after ${await untilResolved(prom, full, 180_000)} ms (EtcdClusterAlarmsRecurring counts over an hour: it stays)`);

  await untilFiring(prom, ['EtcdBackupVerificationFailing'], 300_000);
  t.diagnostic(`chunk ${lost.name} lost: EtcdBackupVerificationFailing fired ${Date.now() - chunkLost} ms after`);
  // A new spec restarts the change log from a new snapshot: the next verification restores whole again.
  await bed.transport.call('PATCH', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdbackups/continuous`, { spec: { continuous: { chunkSeconds: 3 } } }, 'application/merge-patch+json');
  t.diagnostic(`a new snapshot and log: resolved after ${await untilResolved(prom, ['EtcdBackupVerificationFailing'], 300_000)} ms`);

  // No more verifications (each makes a cluster, whose passes would fail too below).
  await bed.transport.call('DELETE', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdbackups/continuous`);

  // 3. The operator's Role narrowed (a chart upgrade gone wrong) and then both specs changed: every pass over a
  // cluster fails at its status write (an unchanged status is not written: a steady cluster would not tell).
  const rolePath = `/apis/rbac.authorization.k8s.io/v1/namespaces/${bed.namespace}/roles/${NAME}`;
  const role = (await bed.transport.call('GET', rolePath)) as RoleJson;
  const narrowed = (role.rules ?? []).map((r) => ({ ...r, resources: r.resources?.filter((x) => x !== 'etcdclusters/status') }));
  await bed.transport.call('PUT', rolePath, { ...role, rules: narrowed });
  let restored = false;
  t.after(() => { if (!restored) install(); });
  for (const cluster of ['src', 'tight']) {
    await bed.transport.call('PATCH', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdclusters/${cluster}`,
      { spec: { pod: { annotations: { 'alert-faults.test/changed': 'yes' } } } }, 'application/merge-patch+json');
  }
  const failing = ['EtcdClusterUnobserved', 'EtcdOperatorNotReconciling'];
  t.diagnostic(`status writes forbidden: ${failing.join(', ')} fired after ${await untilFiring(prom, failing, 300_000)} ms`);
  install();
  restored = true;
  t.diagnostic(`Role restored: resolved after ${await untilResolved(prom, failing, 300_000)} ms`);
});
