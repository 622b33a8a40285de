// Issue 31: point-in-time restores exact on data written the way real clients write it. The source holds keys
// attached to short-TTL leases (in the base snapshot too), leases that expire with more keys than etcd allows in
// one transaction, a prefix delete of 200 keys, guarded transactions of racing clients and values near 1 MiB; a
// compaction follows. Restores to four revisions must each hold exactly what the recorded model of the source held
// then, key by key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RestoreSpec } from '../../src/api/etcd-backup.js';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import { eventually } from '../support/lab.js';
import { etcdCompact, etcdRangeAll, etcdStatus } from '../support/etcd-gateway.js';
import { backupBed, changeLogThrough, createBackup, getBackup, restoreToEnd } from '../support/backup-bed.js';
import { bigValue, deleteAndPut, deletePrefix, firstDifference, guardedUpdate, leasedKeys, modelKeys, putAll, recordSource, startClients } from '../support/real-workload.js';
import { storeRevisionOf } from '../../src/controllers/restore/bumped-revisions.js';

test('point-in-time restores of a realistic workload (leases expiring with > 128 keys, a 200-key prefix delete, guarded txns, 900 KiB values, a compaction) hold exactly the source\'s keys at each revision', async (t) => {
  const { bed, minio } = await backupBed(t, 'pitrw', 1);
  const endpoint = await bed.clientEndpoint('src');
  // The client Service answers once its endpoints reach the nodes' proxies.
  await eventually('the source answering through its client Service', 60_000, async () => (await etcdStatus(endpoint, { timeoutMs: 2000 })).revision);
  const model = recordSource(endpoint);
  bed.after(() => { model.stop(); });

  // Before the base snapshot: a namespace's objects, big ConfigMaps, two event leases of 150 and 140 keys, and
  // a master lease with its keys, all kept alive; the clients write throughout.
  await putAll(endpoint, Array.from({ length: 200 }, (_, i) => [`/registry/configmaps/ns-a/cm-${String(i).padStart(3, '0')}`, `data ${i}`]));
  for (const ns of ['ns-c', 'ns-e']) await putAll(endpoint, Array.from({ length: 100 }, (_, i) => [`/registry/configmaps/${ns}/cm-${String(i).padStart(3, '0')}`, `${ns} ${i}`]));
  for (let i = 0; i < 3; i++) await guardedUpdate(endpoint, `/registry/configmaps/big/cm-${i}`, () => bigValue(900 * 1024, `big-${i}-v1`));
  const eventsA = await leasedKeys(endpoint, 8, Array.from({ length: 150 }, (_, i) => [`/registry/events/ns-a/ev-${String(i).padStart(3, '0')}`, `event a ${i}`]));
  const eventsB = await leasedKeys(endpoint, 8, Array.from({ length: 140 }, (_, i) => [`/registry/events/ns-b/ev-${String(i).padStart(3, '0')}`, `event b ${i}`]));
  const master = await leasedKeys(endpoint, 10, [['/registry/masterleases/10.0.0.1', 'apiserver 1'], ['/registry/masterleases/10.0.0.2', 'apiserver 2']]);
  bed.after(() => { [eventsA, eventsB, master].forEach((l) => { l.letExpire(); }); });
  const clients = startClients(endpoint, '/registry/load/');
  bed.after(async () => { await clients.stop(); });

  const s3 = { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true };
  await createBackup(bed, 'src', { clusterName: 'src', storageType: 'S3', s3, backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 } });
  const first = await eventually('the base snapshot taken and the log following', 90_000, async () => {
    const b = await getBackup(bed, 'src');
    return b.status?.succeeded && b.status.conditions?.some((c) => c.type === 'ChangeLog' && c.status === 'True') ? b : undefined;
  });
  const snapshotRevision = first.status?.etcdRevision ?? 0;

  // P0: a few seconds on, every lease of the snapshot still alive on the source.
  await new Promise((r) => setTimeout(r, 3000));
  const p0 = await guardedUpdate(endpoint, '/registry/marks/p0', () => 'p0');

  // P1: both event leases let go; the source expires each with all its keys at one revision.
  eventsA.letExpire();
  eventsB.letExpire();
  const expiries = await eventually('both event leases expired on the source', 60_000, () => {
    const burst = model.revisions().filter((r) => r.deletes.length >= 140);
    return Promise.resolve(burst.length >= 2 ? burst : undefined);
  });
  const p1 = expiries[0]?.revision ?? 0;

  // P2: a namespace deleted: 200 keys at one revision; then the source compacts through it.
  const { revision: p2, deleted } = await deletePrefix(endpoint, '/registry/configmaps/ns-a/');
  assert.equal(deleted, 200);
  await guardedUpdate(endpoint, '/registry/configmaps/big/cm-1', () => bigValue(900 * 1024, 'big-1-v2'));
  await model.through(p2);
  await etcdCompact(endpoint, p2);

  // P3: more of the same after the compaction, the master lease still alive; on the way, one transaction that
  // deletes two namespaces and creates a key that sorts between them (201 events at one revision).
  const moved = await deleteAndPut(endpoint, ['/registry/configmaps/ns-c/', '/registry/configmaps/ns-e/'], [['/registry/configmaps/ns-d/new', 'created among the deleted']]);
  await new Promise((r) => setTimeout(r, 3000));
  const p3 = await guardedUpdate(endpoint, '/registry/marks/p3', () => 'p3', [['/registry/configmaps/big/cm-2', bigValue(900 * 1024, 'big-2-v2')]]);
  const written = await clients.stop();
  await model.through(p3);
  t.diagnostic(`source: snapshot at ${snapshotRevision}; P0 ${p0}, P1 ${p1} (${expiries.map((e) => `${e.revision}: ${e.deletes.length} deletes`).join(', ')}), P2 ${p2} (200 deletes), ${moved} (200 deletes and a put among them), P3 ${p3}; clients wrote ${JSON.stringify(written)}`);
  // The model agrees with the source's own history where the source still has it.
  assert.equal(firstDifference((await etcdRangeAll(endpoint, p3)).kvs, modelKeys(model, p3)), undefined, 'the recorded model is the source at P3');
  await eventually('the change log through P3', 60_000, () => changeLogThrough(bed, 'src', p3));

  // P0 and P1 keep the source's revision numbers (revisionBump: 0); P2 and P3 take the default, Kubernetes' safe
  // one: revisions raised by a billion, the snapshot's keys at theirs, the replayed ones raised.
  const points = { p0, p1, p2, p3 };
  const bumps: Record<string, number | undefined> = { p0: 0, p1: 0 };
  const outcomes = await Promise.all(Object.entries(points).map(async ([name, revision]) => {
    const bump = bumps[name];
    const spec: RestoreSpec = { etcdCluster: { name: `at-${name}` }, backupStorageType: 'S3', s3, pointInTime: { revision }, clusterSpec: { size: 1 }, ...(bump === undefined ? {} : { revisionBump: bump }) };
    const r = await restoreToEnd(bed, `at-${name}`, spec, 300_000);
    if (r.status?.phase !== 'Completed') return `${name} (revision ${revision}): ${r.status?.phase} ${r.status?.reason}: ${r.status?.conditions?.[0]?.message}`;
    const shift = { held: r.status.pointInTime?.snapshotHeld ?? 0, bump: r.status.pointInTime?.revisionBump ?? -1 };
    if (shift.bump !== (bump ?? 1_000_000_000)) return `${name}: the store was bumped by ${shift.bump}, not ${bump ?? 'the default'}`;
    // Read at once: once the restore has ended, the snapshot's leases run out as they would have on the source.
    const held = await etcdRangeAll(await bed.clientEndpoint(`at-${name}`), storeRevisionOf(shift, revision));
    const differs = firstDifference(held.kvs, modelKeys(model, revision, shift));
    t.diagnostic(`${name}: revision ${revision} (bump ${shift.bump}, snapshot held ${shift.held}), ${held.kvs.length} keys, store at ${held.revision}${differs ? `; differs: ${differs}` : '; equal to the source'}`);
    if (shift.bump > 0 && held.revision !== storeRevisionOf(shift, revision)) return `${name}: the restored store is at ${held.revision}, not ${storeRevisionOf(shift, revision)}`;
    if (r.status.pointInTime?.replayedThrough !== revision) return `${name}: replayed through ${r.status.pointInTime?.replayedThrough}, not ${revision}`;
    return differs ? `${name} (revision ${revision}): ${differs}` : undefined;
  }));
  assert.deepEqual(outcomes.filter((o) => o !== undefined), [], 'every restore Completed with exactly the source\'s keys');

  // A verification of this backup restores its change log's newest revision and compares it with the live cluster:
  // the snapshot's leases must not run out under it and make it differ.
  await bed.transport.call('PATCH', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdbackups/src`, { spec: { verification: { intervalInSecond: 3600 } } }, 'application/merge-patch+json');
  const verified = await eventually('the backup verified at or past P3', 300_000, async () => {
    const b = await getBackup(bed, 'src');
    const v = b.status?.conditions?.find((c) => c.type === 'Verified');
    return v && (v.status === 'False' || (b.status?.verification?.lastVerifiedRevision ?? 0) >= p3) ? { b, v } : undefined;
  });
  assert.equal(verified.v.status, 'True', JSON.stringify(verified.v));
  t.diagnostic(`verified: ${verified.v.message}`);
});

