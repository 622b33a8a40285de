import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DEFAULT_ETCD_VERSION, GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { S3Location } from '../../src/api/etcd-backup.js';
import { eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio, storedKeys } from '../support/minio.js';
import { createBackup, getBackup, takeBackup } from '../support/backup-bed.js';
import { counterSeries } from '../support/process-usage.js';
import type { Minio } from '../support/minio.js';

async function objectBytes(minio: Minio, bucket: string, key: string): Promise<Buffer> {
  const res = await minio.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await res.Body?.transformToByteArray() ?? []);
}

const s3 = (minio: Minio, path: string): S3Location => ({ path, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true });

test('EtcdBackup to S3 (a real MinIO): 10,000 keys snapshotted with revision and checksum; periodic backups keep maxBackups', async (t) => {
  const bed = await testbed(t, 'backup');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const operator = startOperator(t, bed.namespace);

  await bed.create('source', { size: 3 });
  await eventually('3 members Running', 120_000, async () => {
    const c = await bed.get('source');
    const pods = await bed.pods('source');
    return c.status?.phase === 'Running' && pods.length === 3 && pods.every(isReady) ? c : undefined;
  });
  const ip = (await bed.core.readNamespacedService({ name: 'source-client', namespace: bed.namespace })).spec?.clusterIP ?? '';
  const endpoint = `http://${ip}:2379`;
  const keys = Array.from({ length: 10_000 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('10,000 keys written', 60_000, async () => { await etcdPutMany(endpoint, keys); return true; });
  assert.equal((await etcdGetPrefix(endpoint, 'key-')).size, 10_000);

  const started = Date.now();
  const done = await takeBackup(bed, 'once', { clusterName: 'source', storageType: 'S3', s3: s3(minio, 'backups/source/once.db') }, 60_000);
  t.diagnostic(`backup of 10,000 keys took ${Date.now() - started} ms: ${JSON.stringify(done.status?.lastBackup)}`);
  const status = done.status;
  assert.ok(status && (status.etcdRevision ?? 0) > 100, 'the revision is recorded');
  assert.equal(status.etcdVersion, DEFAULT_ETCD_VERSION, 'the source runs the default version');
  const bytes = await objectBytes(minio, 'backups', 'source/once.db');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  assert.equal(status.lastBackup?.sha256, sha256, 'status carries the checksum of the object');
  assert.equal(status.lastBackup.size, bytes.length);
  assert.equal((await objectBytes(minio, 'backups', 'source/once.db.sha256')).toString().trim(), sha256, 'the checksum is stored beside it');
  assert.ok(bytes.length > 10_000 * 16, 'the snapshot holds the data');

  await createBackup(bed, 'every', { clusterName: 'source', storageType: 'S3', s3: s3(minio, 'backups/source/periodic'), backupPolicy: { backupIntervalInSecond: 1, maxBackups: 2 } });
  const events = async (): Promise<number> => (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .filter((e) => e.involvedObject.name === 'every' && e.reason === 'BackupTaken').reduce((n, e) => n + (e.count ?? 1), 0);
  await eventually('four periodic backups taken', 60_000, async () => ((await events()) >= 4 ? true : undefined));
  const names = await storedKeys(minio, 'backups', 'source/periodic_v');
  assert.equal(names.filter((n) => !n.endsWith('.sha256')).length, 2, `exactly maxBackups kept: ${names.join(', ')}`);
  assert.equal(names.filter((n) => n.endsWith('.sha256')).length, 2, 'each with its checksum');
  assert.equal((await getBackup(bed, 'every')).status?.backups, 2);

  await createBackup(bed, 'nosecret', { clusterName: 'source', storageType: 'S3', s3: { ...s3(minio, 'backups/x'), awsSecret: 'missing' } });
  const refused = await eventually('a clear failure', 30_000, async () => {
    const b = await getBackup(bed, 'nosecret');
    return b.status?.succeeded === false ? b : undefined;
  });
  assert.equal(refused.status?.conditions?.[0]?.reason, 'SecretMissing');
  assert.match(refused.status.reason ?? '', /Secret missing does not exist/);

  // The same, as Prometheus sees it: per EtcdBackup, the newest backup's time (RPO = time() minus it), size,
  // revision and duration, and counts by result; a deleted EtcdBackup's series go with it.
  const series = async (name: string): Promise<Map<string, number>> => counterSeries(await (await fetch(await operator.metricsUrl())).text(), name);
  const of = (backup: string): string => `{namespace="${bed.namespace}",backup="${backup}"}`;
  const size = await series('etcd_operator_backup_last_size_bytes');
  assert.equal(size.get(of('once')), status.lastBackup.size, 'the size as stored');
  assert.equal((await series('etcd_operator_backup_last_revision')).get(of('once')), status.etcdRevision);
  const at = (await series('etcd_operator_backup_last_success_timestamp_seconds')).get(of('once')) ?? 0;
  assert.ok(Math.abs(at - Date.parse(status.lastSuccessDate ?? '') / 1000) < 5, `taken at ${at}, status says ${status.lastSuccessDate ?? ''}`);
  assert.ok(((await series('etcd_operator_backup_last_duration_seconds')).get(of('once')) ?? 0) > 0);
  const counts = await series('etcd_operator_backups_total');
  assert.equal(counts.get(`{namespace="${bed.namespace}",backup="once",result="succeeded"}`), 1);
  assert.ok((counts.get(`{namespace="${bed.namespace}",backup="every",result="succeeded"}`) ?? 0) >= 4);
  assert.ok((counts.get(`{namespace="${bed.namespace}",backup="nosecret",result="failed"}`) ?? 0) >= 1);
  await bed.transport.call('DELETE', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdbackups/once`);
  await eventually('a deleted backup\'s series gone', 30_000, async () => ((await series('etcd_operator_backup_last_size_bytes')).has(of('once')) ? undefined : true));
  operator.succeeded();
});
