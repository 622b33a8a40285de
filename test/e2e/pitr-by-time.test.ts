// Issue 31, finding 7: a restore to a *time* after faults. The change log is held up by its store for 30 s, then
// the operator is killed and stays down for 15 s, while a client writes on and records when each write was
// acknowledged. A time inside the store outage must be pinned to the revision acknowledged by then (within the
// stated bound, never a later one); a time during the operator's absence, when nothing read the cluster's clock,
// must be refused rather than restored from whatever the log received before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RestoreSpec } from '../../src/api/etcd-backup.js';
import { PIN_BOUND_MS } from '../../src/storage/change-log.js';
import { eventually } from '../support/lab.js';
import { etcdPut, etcdRangeAll, etcdStatus } from '../support/etcd-gateway.js';
import { backupBed, changeLogThrough, createBackup, restoreToEnd } from '../support/backup-bed.js';
import { storeRelay } from '../support/store-relay.js';
import { startOperator } from '../support/operator-process.js';

test('a restore to a time during a store outage pins the revision acknowledged by then; one during an operator outage is refused', async (t) => {
  const { bed, minio, ...started } = await backupBed(t, 'pitr-time', 1);
  let { operator } = started;
  const relay = await storeRelay(t, minio.endpoint);
  const endpoint = await bed.clientEndpoint('src');
  await eventually('the source answering', 60_000, async () => (await etcdStatus(endpoint, { timeoutMs: 2000 })).revision);
  const s3 = { path: 'backups/src.db', awsSecret: 'aws', endpoint: relay.endpoint, forcePathStyle: true };
  await createBackup(bed, 'src', { clusterName: 'src', storageType: 'S3', s3, backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 } });

  // A client writing all along, each write with the time it was acknowledged.
  const acked: { atMs: number; revision: number }[] = [];
  const writing = { on: true };
  const writer = (async () => {
    for (let i = 0; writing.on; i++) {
      const revision = await etcdPut(endpoint, `w-${i}`, String(i), { timeoutMs: 2000 }).catch(() => 0);
      if (revision > 0) acked.push({ atMs: Date.now(), revision });
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  t.after(async () => { writing.on = false; await writer; });
  /** The newest revision acknowledged at or before `ms`. */
  const ackedBy = (ms: number): number => acked.filter((w) => w.atMs <= ms).reduce((n, w) => Math.max(n, w.revision), 0);
  await new Promise((r) => setTimeout(r, 1000));
  const firstWrites = acked.at(-1)?.revision ?? 1;
  await eventually('the change log following', 90_000, async () => changeLogThrough(bed, 'src', firstWrites));

  // The store holds every write of the log for 30 s.
  relay.hold((method, path) => method === 'PUT' && path.includes('/src.db.changes/'));
  const outageAt = Date.now();
  await new Promise((r) => setTimeout(r, 30_000));
  relay.heal();
  const inOutage = outageAt + 15_000;
  await eventually('the log through the outage', 120_000, async () => changeLogThrough(bed, 'src', ackedBy(outageAt + 30_000)));

  // The operator killed, down for 15 s.
  await operator.kill();
  const killedAt = Date.now();
  await new Promise((r) => setTimeout(r, 15_000));
  operator = startOperator(t, bed.namespace);
  await new Promise((r) => setTimeout(r, 5_000));
  writing.on = false;
  await writer;
  const last = acked.at(-1)?.revision ?? 0;
  await eventually('the log through the last write', 120_000, async () => changeLogThrough(bed, 'src', last));

  const restoreAt = (name: string, ms: number): Promise<Awaited<ReturnType<typeof restoreToEnd>>> => {
    const spec: RestoreSpec = { etcdCluster: { name }, backupStorageType: 'S3', s3: { ...s3, endpoint: minio.endpoint }, pointInTime: { time: new Date(ms).toISOString() }, revisionBump: 0, clusterSpec: { size: 1 } };
    return restoreToEnd(bed, name, spec, 300_000);
  };
  const [outage, afterKill, down] = await Promise.all([restoreAt('in-outage', inOutage), restoreAt('after-kill', killedAt + 700), restoreAt('while-down', killedAt + 7_000)]);

  assert.equal(outage.status?.phase, 'Completed', JSON.stringify(outage.status));
  const pinned = outage.status.pointInTime?.replayedThrough ?? 0;
  const want = ackedBy(inOutage);
  const lagMs = inOutage - (acked.find((w) => w.revision >= pinned)?.atMs ?? inOutage);
  t.diagnostic(`a time in the store outage: revision ${pinned}; acknowledged by then: ${want}; the restore is ${(lagMs / 1000).toFixed(1)} s behind it`);
  assert.ok(pinned <= want, `no write acknowledged after the time (${pinned} > ${want})`);
  assert.ok(pinned >= ackedBy(inOutage - PIN_BOUND_MS), `every write acknowledged ${PIN_BOUND_MS / 1000} s before the time is in (${pinned} < ${ackedBy(inOutage - PIN_BOUND_MS)})`);
  const held = await etcdRangeAll(await bed.clientEndpoint('in-outage'));
  assert.deepEqual(held.kvs, (await etcdRangeAll(endpoint, pinned)).kvs, 'the restored store is the source at that revision');

  for (const refused of [afterKill, down]) {
    assert.deepEqual([refused.status?.phase, refused.status?.reason], ['Failed', 'PointInTimeUnavailable'], JSON.stringify(refused.status));
    assert.match(refused.status?.conditions?.[0]?.message ?? '', /cannot be pinned/);
  }
  t.diagnostic(`0.7 s after the kill: ${afterKill.status?.conditions?.[0]?.message}`);
  operator.succeeded();
});
