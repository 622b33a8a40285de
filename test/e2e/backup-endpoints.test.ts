// Issue 32, finding 10: an EtcdBackup naming etcdEndpoints makes the operator read whatever etcd its network
// reaches into a bucket the requester names (a confused deputy). Unless the installer allowed it, such a backup
// fails with a condition that says how to allow it, and nothing is read or stored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { backupBed, createBackup, getBackup, podUrl } from '../support/backup-bed.js';
import { storedKeys } from '../support/minio.js';
import { startOperator } from '../support/operator-process.js';

test('a backup of etcdEndpoints is refused (EndpointsNotAllowed, nothing stored) unless the operator runs with --allow-backup-endpoints', async (t) => {
  const { bed, minio, operator, members } = await backupBed(t, 'endpoints', 1);
  const [member] = members;
  assert.ok(member);
  await createBackup(bed, 'foreign', {
    etcdEndpoints: [podUrl(member)], storageType: 'S3', s3: { path: 'backups/foreign.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
  });
  const refused = await eventually('the backup refused', 60_000, async () => {
    const c = (await getBackup(bed, 'foreign')).status?.conditions?.find((x) => x.type === 'Succeeded');
    return c?.status === 'False' ? c : undefined;
  });
  assert.equal(refused.reason, 'EndpointsNotAllowed', JSON.stringify(refused));
  assert.match(refused.message ?? '', /--allow-backup-endpoints/);
  assert.deepEqual(await storedKeys(minio, 'backups', 'foreign'), [], 'nothing read into the bucket');

  // The installer allows it: the same backup is taken.
  await operator.stop();
  const allowed = startOperator(t, bed.namespace, ['--allow-backup-endpoints']);
  const taken = await eventually('the backup taken once allowed', 120_000, async () => {
    const b = await getBackup(bed, 'foreign');
    return b.status?.succeeded ? b : undefined;
  });
  assert.ok((taken.status?.lastBackup?.size ?? 0) > 0);
  allowed.succeeded();
});
