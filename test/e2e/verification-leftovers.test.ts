// suite: extended — an edge of verification (a restore of its name not its own, one left behind, one called off), whose main path verified-backup and verified-point-in-time hold in the gate.
// A verification's disposable restore is its own and nobody else's: an EtcdRestore of the same name that is
// not a verification's is reported and left alone; one of its own left behind (the operator stopped between
// recording a verdict and deleting it) is deleted instead of holding every later verification back; and a
// verification called off while it runs (spec.verification removed) deletes what it made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdBackup, EtcdRestore, RestoreSpec } from '../../src/api/etcd-backup.js';
import { verifyName } from '../../src/controllers/backup/verify.js';
import { ANNOTATION_VERIFIES } from '../../src/k8s/labels.js';
import { eventually } from '../support/lab.js';
import { etcdPutMany } from '../support/etcd-gateway.js';
import { backupBed, createBackup, createRestore, getBackup, getRestore } from '../support/backup-bed.js';

test('a verification reports a restore of its name that is not its own and leaves it alone, deletes one of its own left behind, and deletes its restore when called off', async (t) => {
  const { bed, minio, operator } = await backupBed(t, 'verify-left');
  await eventually('keys written', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('src'), [['k', 'v']]); return true; });
  const scratch = verifyName('nightly');
  const restorePath = `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdrestores/${scratch}`;
  const scratchRestore = (): Promise<EtcdRestore | undefined> => getRestore(bed, scratch);
  const verified = (b: EtcdBackup) => b.status?.conditions?.find((c) => c.type === 'Verified');
  const s3 = { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true };
  const restoreSpec: RestoreSpec = { etcdCluster: { name: scratch }, backupStorageType: 'S3', s3, clusterSpec: { size: 1 } };

  // Somebody's own restore under the name a verification would use.
  await createRestore(bed, scratch, { ...restoreSpec, etcdCluster: { name: 'someone-elses' } });
  const foreign = await scratchRestore();
  await createBackup(bed, 'nightly', { clusterName: 'src', storageType: 'S3', s3, verification: { intervalInSecond: 60 } });
  const refused = await eventually('the verification refused to start', 120_000, async () => {
    const b = await getBackup(bed, 'nightly');
    return verified(b)?.reason === 'CannotVerify' ? b : undefined;
  });
  assert.match(verified(refused)?.message ?? '', new RegExp(`EtcdRestore ${scratch} exists and is not this backup's verification`));
  assert.equal((await scratchRestore())?.metadata.uid, foreign?.metadata.uid, 'the restore that is not its own is left alone');

  // Gone; in its place, one of the verification's own as a finished one left behind would be (it makes its cluster).
  await bed.transport.call('DELETE', restorePath);
  await eventually('the other restore gone', 60_000, async () => ((await scratchRestore()) ? undefined : true));
  await bed.transport.call('POST', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdrestores`, {
    apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdRestore', metadata: { name: scratch, annotations: { [ANNOTATION_VERIFIES]: 'nightly' } }, spec: restoreSpec,
  });
  const leftover = await scratchRestore();
  const passed = await eventually('a verification through despite the leftover', 240_000, async () => {
    const b = await getBackup(bed, 'nightly');
    return verified(b)?.status === 'True' ? b : undefined;
  });
  assert.ok(passed.status?.verification?.lastVerifiedRevision, JSON.stringify(passed.status?.verification));
  assert.notEqual((await scratchRestore())?.metadata.uid, leftover?.metadata.uid, 'the leftover was deleted, not taken for a running verification');

  // The next verification, called off while it runs.
  const running = await eventually('the next verification running', 180_000, async () => {
    const b = await getBackup(bed, 'nightly');
    return b.status?.verification?.running ? b : undefined;
  });
  assert.equal(running.status?.verification?.running?.restore, scratch);
  await bed.transport.call('PATCH', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdbackups/nightly`, [{ op: 'remove', path: '/spec/verification' }], 'application/json-patch+json');
  await eventually('the called-off verification\'s restore and cluster deleted, and forgotten', 120_000, async () => {
    const b = await getBackup(bed, 'nightly');
    const clusterGone = await bed.get(scratch).then(() => false, () => true);
    return !b.status?.verification?.running && !(await scratchRestore()) && clusterGone ? true : undefined;
  });
  operator.succeeded();
});
