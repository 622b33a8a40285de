// Issue 19, item 5 for a continuous backup: its verification restores the newest revision its change log
// holds (the newest snapshot with the log replayed on it), not the snapshot alone, and compares that with
// the live cluster by content; a change log with a chunk lost fails the next verification with a condition.
// And a change of a continuous backup's spec restarts its change log instead of leaving the backup stuck.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdBackup } from '../../src/api/etcd-backup.js';
import { verifyName } from '../../src/controllers/backup/verify.js';
import { chunksOf } from '../../src/storage/change-log.js';
import { eventually } from '../support/lab.js';
import { etcdPutMany, etcdStatus } from '../support/etcd-gateway.js';
import { backupBed, createBackup, getBackup } from '../support/backup-bed.js';
import { storedKeys } from '../support/minio.js';

test('a continuous backup is verified at the newest revision of its change log, by content; a lost chunk fails the next verification; a spec change restarts the log', async (t) => {
  const { bed, minio, operator } = await backupBed(t, 'verify-pit');
  const endpoint = await bed.clientEndpoint('src');
  await eventually('keys before the snapshot', 60_000, async () => {
    await etcdPutMany(endpoint, Array.from({ length: 500 }, (_, i): [string, string] => [`before-${i}`, `v${i}`]));
    return true;
  });

  await createBackup(bed, 'live', {
    clusterName: 'src', storageType: 'S3', s3: { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
    backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 }, verification: { intervalInSecond: 60 },
  });
  const get = (): Promise<EtcdBackup> => getBackup(bed, 'live');
  const verified = (b: EtcdBackup) => b.status?.conditions?.find((c) => c.type === 'Verified');
  const scratch = verifyName('live');
  const scratchGone = async (): Promise<true | undefined> => ((await bed.get(scratch).then(() => false, () => true)) && (await bed.pods(scratch)).length === 0 ? true : undefined);

  // Nothing in the change log past the snapshot yet: the first verification restores the snapshot alone.
  const first = await eventually('the first verification through', 180_000, async () => {
    const b = await get();
    return verified(b) ? b : undefined;
  });
  const snapshotRevision = first.status?.etcdRevision ?? 0;
  const firstVerification = first.status?.verification;
  assert.equal(verified(first)?.status, 'True', JSON.stringify(verified(first)));
  assert.equal(firstVerification?.lastVerifiedRevision, snapshotRevision);
  assert.equal(firstVerification.method, 'HashKV');

  // Written after the snapshot: only the change log holds them.
  await etcdPutMany(endpoint, Array.from({ length: 300 }, (_, i): [string, string] => [`after-${i}`, `w${i}`]));
  const written = (await etcdStatus(endpoint)).revision;
  assert.ok(written > snapshotRevision);
  await eventually(`the change log through revision ${written}`, 60_000, async () => ((await get()).status?.changeLog?.throughRevision ?? 0) >= written ? true : undefined);

  const passed = await eventually('a verification at the change log\'s newest revision', 180_000, async () => {
    const b = await get();
    return (b.status?.verification?.lastVerifiedRevision ?? 0) >= written ? b : undefined;
  });
  const v = passed.status?.verification;
  assert.equal(verified(passed)?.status, 'True', JSON.stringify(verified(passed)));
  assert.ok(v);
  assert.equal(v.method, 'ContentDigest');
  assert.equal(passed.status?.etcdRevision, snapshotRevision, 'still the one snapshot: the revisions after it came from the change log');
  assert.match(verified(passed)?.message ?? '', new RegExp(`with its change log to revision ${v.lastVerifiedRevision ?? -1} restored in \\d+ s: 800 keys at revision ${v.lastVerifiedRevision ?? -1}, digest [0-9a-f]{16}, equal to the live cluster's`));
  t.diagnostic(`verified: ${verified(passed)?.message}`);
  await eventually('the disposable cluster deleted', 60_000, scratchGone);

  // A chunk holding some of the later writes lost from the store: the newest revision can no longer be rebuilt.
  const chunks = chunksOf((await storedKeys(minio, 'backups', 'src.db.changes/')).filter((k) => !k.endsWith('.sha256')), 'src.db');
  const lost = chunks.find((c) => c.to > snapshotRevision);
  assert.ok(lost, `a chunk after the snapshot among ${chunks.map((c) => c.name).join(', ')}`);
  await minio.client.send(new DeleteObjectCommand({ Bucket: 'backups', Key: lost.name }));
  const failed = await eventually('the next verification fails', 240_000, async () => {
    const b = await get();
    return verified(b)?.status === 'False' ? b : undefined;
  });
  assert.equal(verified(failed)?.reason, 'PointInTimeUnavailable', JSON.stringify(verified(failed)));
  assert.match(verified(failed)?.message ?? '', /are missing after the nearest snapshot/);
  assert.equal(failed.status?.verification?.lastVerifiedRevision, v.lastVerifiedRevision, 'the last good verification stays on record');
  t.diagnostic(`lost chunk ${lost.name}: ${verified(failed)?.message}`);
  await eventually('the disposable cluster deleted again', 60_000, scratchGone);

  // A change of the spec restarts the change log for the new spec. The old log's watch answers every
  // progress request, so unless stopping closes it, the restart waits for ever and the backup is stuck.
  const changed = Date.now();
  await bed.transport.call('PATCH', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdbackups/live`, { spec: { continuous: { chunkSeconds: 3 } } }, 'application/merge-patch+json');
  await eventually('the backup of the new spec taken and its change log following', 120_000, async () => {
    const b = await get();
    return b.status?.observedGeneration === b.metadata.generation && Date.parse(b.status?.changeLog?.confirmedAt ?? '') > changed ? true : undefined;
  });
  operator.succeeded();
});
