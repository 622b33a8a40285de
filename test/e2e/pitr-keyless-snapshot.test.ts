// Point-in-time restores with the default revision bump from a snapshot of an empty source (revision 1, no key in
// it: seen in CI, where a continuous backup's first snapshot came before the first write and the restore ended
// StoreCompacted at revision 2). etcdutl raises the newest revision that has a key, here none, so the store stands
// one below the name plus the bump, and the replay must number the source's revisions from where it stands. Beside
// it, a snapshot named by a prefix delete the source compacted at once: etcd keeps the tombstones at the compaction's
// revision, so that store stands at the name plus the bump.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdBackup, RestoreSpec } from '../../src/api/etcd-backup.js';
import { DEFAULT_REVISION_BUMP } from '../../src/api/etcd-backup.js';
import { storeRevisionOf } from '../../src/controllers/restore/bumped-revisions.js';
import { eventually } from '../support/lab.js';
import { etcdCompact, etcdRangeAll, etcdStatus } from '../support/etcd-gateway.js';
import { backupBed, changeLogThrough, createBackup, getBackup, restoreToEnd } from '../support/backup-bed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { bigValue, deletePrefix, firstDifference, guardedUpdate, leasedKeys, modelKeys, putAll, recordSource, startClients } from '../support/real-workload.js';

/** A continuous backup of `src` at `path`, once its first snapshot is taken and its log follows. */
async function continuousBackup(bed: Testbed, name: string, path: string, endpoint: string): Promise<EtcdBackup> {
  const s3 = { path, awsSecret: 'aws', endpoint, forcePathStyle: true };
  await createBackup(bed, name, { clusterName: 'src', storageType: 'S3', s3, backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 } });
  return eventually(`backup ${name}: its snapshot taken and its log following`, 90_000, async () => {
    const b = await getBackup(bed, name);
    return b.status?.succeeded && b.status.conditions?.some((c) => c.type === 'ChangeLog' && c.status === 'True') ? b : undefined;
  });
}

test('point-in-time restores with the default bump from a snapshot of an empty source, and from one named by a compacted prefix delete, hold exactly the source\'s keys', async (t) => {
  const { bed, minio } = await backupBed(t, 'pitrk', 1);
  const endpoint = await bed.clientEndpoint('src');
  const { revision: untouched } = await eventually('the source answering through its client Service', 60_000, () => etcdStatus(endpoint, { timeoutMs: 2000 }));
  assert.equal(untouched, 1, 'nothing has written to the source yet');
  const model = recordSource(endpoint);
  bed.after(() => { model.stop(); });

  // A snapshot of the empty store.
  const empty = await continuousBackup(bed, 'empty', 'backups/empty.db', minio.endpoint);
  assert.equal(empty.status?.etcdRevision, 1, 'the first snapshot is of the empty store');

  // Keys a namespace holds, a kept-alive lease with its keys, a guarded update of a big value; a live key; then the
  // namespace deleted in one revision, which the source compacts at once.
  await putAll(endpoint, Array.from({ length: 150 }, (_, i) => [`/registry/pods/ns-x/p-${String(i).padStart(3, '0')}`, `pod ${i}`]));
  const master = await leasedKeys(endpoint, 10, [['/registry/masterleases/10.0.0.1', 'apiserver 1'], ['/registry/masterleases/10.0.0.2', 'apiserver 2']]);
  bed.after(() => { master.letExpire(); });
  await guardedUpdate(endpoint, '/registry/configmaps/big/cm-0', () => bigValue(900 * 1024, 'big-0-v1'));
  await putAll(endpoint, [['/registry/marks/before-delete', 'live']]);
  const { revision: deletedAt, deleted } = await deletePrefix(endpoint, '/registry/pods/ns-x/');
  assert.equal(deleted, 150);
  await etcdCompact(endpoint, deletedAt);
  const tombstoned = await continuousBackup(bed, 'tombstoned', 'backups/tombstoned.db', minio.endpoint);
  assert.equal(tombstoned.status?.etcdRevision, deletedAt, 'the second snapshot is named by the compacted delete');

  // Then what real clients write: racing guarded updates, events on shared short leases, a lease that expires with
  // 140 keys at one revision, another namespace deleted, a transaction with a big value.
  const clients = startClients(endpoint, '/registry/load/');
  bed.after(async () => { await clients.stop(); });
  const events = await leasedKeys(endpoint, 4, Array.from({ length: 140 }, (_, i) => [`/registry/events/ns-y/ev-${String(i).padStart(3, '0')}`, `event ${i}`]));
  await putAll(endpoint, Array.from({ length: 120 }, (_, i) => [`/registry/configmaps/ns-z/cm-${String(i).padStart(3, '0')}`, `cm ${i}`]));
  events.letExpire();
  await eventually('the event lease expired on the source with its keys', 60_000, () => Promise.resolve(model.revisions().some((r) => r.deletes.length === 140) ? true : undefined));
  await deletePrefix(endpoint, '/registry/configmaps/ns-z/');
  const target = await guardedUpdate(endpoint, '/registry/marks/target', () => 'target', [['/registry/configmaps/big/cm-1', bigValue(900 * 1024, 'big-1-v1')]]);
  const written = await clients.stop();
  await model.through(target);
  assert.equal(firstDifference((await etcdRangeAll(endpoint, target)).kvs, modelKeys(model, target)), undefined, 'the recorded model is the source at the target');
  for (const b of ['empty', 'tombstoned']) await eventually(`backup ${b}'s log through ${target}`, 60_000, () => changeLogThrough(bed, b, target));
  t.diagnostic(`source: prefix delete at ${deletedAt} compacted; target ${target}; clients wrote ${JSON.stringify(written)}`);

  // The empty store was raised from 0, so the source's revisions after it land one less raised than the bump.
  const cases = [{ backup: 'empty', named: 1, bump: DEFAULT_REVISION_BUMP - 1 }, { backup: 'tombstoned', named: deletedAt, bump: DEFAULT_REVISION_BUMP }];
  const outcomes = await Promise.all(cases.map(async ({ backup, named, bump }) => {
    const name = `from-${backup}`;
    const spec: RestoreSpec = { etcdCluster: { name }, backupStorageType: 'S3', s3: { path: `backups/${backup}.db`, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true }, pointInTime: { revision: target }, clusterSpec: { size: 1 } };
    const r = await restoreToEnd(bed, name, spec, 300_000);
    if (r.status?.phase !== 'Completed') return `${name}: ${r.status?.phase} ${r.status?.reason}: ${r.status?.conditions?.[0]?.message}`;
    const pit = r.status.pointInTime;
    if (!pit || pit.snapshotRevision !== named) return `${name}: restored from the snapshot named ${pit?.snapshotRevision}, not ${named}`;
    const shift = { held: pit.snapshotHeld ?? 0, bump: pit.revisionBump ?? -1 };
    if (shift.held !== named || shift.bump !== bump) return `${name}: the shift found is ${JSON.stringify(shift)}`;
    const held = await etcdRangeAll(await bed.clientEndpoint(name), storeRevisionOf(shift, target));
    const differs = firstDifference(held.kvs, modelKeys(model, target, shift));
    t.diagnostic(`${name}: snapshot ${pit.snapshot}, shift ${JSON.stringify(shift)}, ${held.kvs.length} keys at ${held.revision}${differs ? `; differs: ${differs}` : '; equal to the source'}`);
    if (held.revision !== storeRevisionOf(shift, target)) return `${name}: the restored store is at ${held.revision}, not ${storeRevisionOf(shift, target)}`;
    if (pit.replayedThrough !== target) return `${name}: replayed through ${pit.replayedThrough}, not ${target}`;
    return differs ? `${name}: ${differs}` : undefined;
  }));
  assert.deepEqual(outcomes.filter((o) => o !== undefined), [], 'both restores Completed with exactly the source\'s keys');
});
