// Issue 19, item 5: a scheduled verification restores the newest backup somewhere disposable and compares
// it with the live cluster: it passes on a good backup (by HashKV, then by content once the live cluster
// was compacted) and fails, with a condition and an Event, on one whose data was changed (its checksums
// made to match, so only the comparison can tell).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { EtcdBackup } from '../../src/api/etcd-backup.js';
import { verifyName } from '../../src/controllers/backup/verify.js';
import { eventually } from '../support/lab.js';
import { etcdCompact, etcdPutMany } from '../support/etcd-gateway.js';
import { backupBed, createBackup, getBackup } from '../support/backup-bed.js';

test('a scheduled verification passes on a good backup (by HashKV, and by content after a compaction) and fails with a condition and an Event once its data is changed', async (t) => {
  const { bed, minio, operator } = await backupBed(t, 'verify');
  const keys = Array.from({ length: 2000 }, (_, i): [string, string] => [`key-${i}`, `value-${String(i).padStart(5, '0')}`]);
  await eventually('keys written', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('src'), keys); return true; });

  await createBackup(bed, 'nightly', {
    clusterName: 'src', storageType: 'S3', s3: { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
    verification: { intervalInSecond: 60 },
  });
  const get = (): Promise<EtcdBackup> => getBackup(bed, 'nightly');
  const verified = (b: EtcdBackup) => b.status?.conditions?.find((c) => c.type === 'Verified');
  const scratch = verifyName('nightly');
  const gone = async (): Promise<boolean> => (await bed.get(scratch).then(() => false, () => true))
    && (await bed.pods(scratch)).length === 0;

  const passed = await eventually('the first verification through', 180_000, async () => {
    const b = await get();
    return verified(b) ? b : undefined;
  });
  const v = passed.status?.verification;
  assert.equal(verified(passed)?.status, 'True', JSON.stringify(verified(passed)));
  assert.ok(v);
  assert.equal(v.lastVerifiedRevision, passed.status?.etcdRevision, 'the backup\'s revision is the one proven');
  assert.equal(v.method, 'HashKV');
  assert.ok((v.restoreSeconds ?? 0) > 0, `the restore's duration is measured: ${JSON.stringify(v)}`);
  t.diagnostic(`verified: ${verified(passed)?.message}; RTO ${v.restoreSeconds} s`);
  await eventually('the disposable cluster deleted', 60_000, async () => ((await gone()) ? true : undefined));
  const metrics = await (await fetch(await operator.metricsUrl())).text();
  assert.match(metrics, /etcd_operator_backup_verifications_total\{[^}]*backup="nightly"[^}]*result="passed"\} 1/);
  assert.match(metrics, new RegExp(`etcd_operator_backup_last_verified_revision\\{[^}]*backup="nightly"[^}]*\\} ${v.lastVerifiedRevision ?? -1}`));

  // The live cluster compacted below the backup's revision: the two stores' HashKVs now start from
  // different compactions, so the next verification compares their content instead, and still passes.
  await etcdCompact(await bed.clientEndpoint('src'), (v.lastVerifiedRevision ?? 0) - 5);
  const byDigest = await eventually('a verification by content', 180_000, async () => {
    const b = await get();
    return b.status?.verification?.method === 'ContentDigest' ? b : undefined;
  });
  assert.equal(verified(byDigest)?.status, 'True', JSON.stringify(verified(byDigest)));
  assert.match(verified(byDigest)?.message ?? '', new RegExp(`${keys.length} keys at revision ${v.lastVerifiedRevision ?? -1}, digest [0-9a-f]{16}, equal to the live cluster's`));
  t.diagnostic(`verified by content: ${verified(byDigest)?.message}`);
  await eventually('the disposable cluster deleted', 60_000, async () => ((await gone()) ? true : undefined));

  // One value changed inside the stored snapshot; etcd's own trailing sha256 and ours beside it made to match.
  const object = Buffer.from(await (await minio.client.send(new GetObjectCommand({ Bucket: 'backups', Key: 'src.db' }))).Body?.transformToByteArray() ?? []);
  // Every copy of it (bolt keeps stale copies in freed pages).
  let copies = 0;
  for (let at = object.indexOf('value-01234'); at >= 0; at = object.indexOf('value-01234', at + 1), copies++) object.write('value-91234', at);
  assert.ok(copies > 0, 'the value is in the snapshot');
  createHash('sha256').update(object.subarray(0, object.length - 32)).digest().copy(object, object.length - 32);
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'src.db', Body: object }));
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'src.db.sha256', Body: `${createHash('sha256').update(object).digest('hex')}\n` }));

  const failed = await eventually('the next verification fails', 240_000, async () => {
    const b = await get();
    return verified(b)?.status === 'False' ? b : undefined;
  });
  assert.equal(verified(failed)?.reason, 'DataDiffers', JSON.stringify(verified(failed)));
  assert.match(verified(failed)?.message ?? '', /the restored store has 2000 keys \(digest [0-9a-f]{16}\), the live cluster 2000 \([0-9a-f]{16}\)/);
  assert.equal(failed.status?.verification?.lastVerifiedRevision, v.lastVerifiedRevision, 'the last good verification stays on record');
  const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items;
  assert.equal(events.filter((e) => e.reason === 'VerificationFailed' && e.type === 'Warning').length, 1, 'one Warning Event');
  assert.equal(events.filter((e) => e.reason === 'BackupVerified').length, 2);
  await eventually('the disposable cluster deleted again', 60_000, async () => ((await gone()) ? true : undefined));
  t.diagnostic(`damaged: ${verified(failed)?.message}`);
  operator.succeeded();
});
