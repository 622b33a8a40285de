// Issue 19: a store that stops answering a request (a connection gone silent: a dropped NAT entry, a stuck
// load balancer) must not stop backups. The request is given up after a time without progress and sent
// again. A change log stuck on one chunk's write would store nothing more while its RPO grew without end, and
// a backup stuck on its upload would never finish, nor let its EtcdBackup be reconciled again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BackupSpec } from '../../src/api/etcd-backup.js';
import { eventually } from '../support/lab.js';
import { etcdPutMany, etcdStatus } from '../support/etcd-gateway.js';
import { backupBed, changeLogThrough, createBackup, getBackup, untilLogFollows, writingUntil } from '../support/backup-bed.js';
import { storeRelay } from '../support/store-relay.js';

test('a store request that never answers is given up and sent again: the change log catches up by itself, and a backup whose upload hung finishes', async (t) => {
  const { bed, minio, operator } = await backupBed(t, 'store-hang');
  const relay = await storeRelay(t, minio.endpoint);
  const endpoint = await bed.clientEndpoint('src');
  const backup = (name: string, spec: Partial<BackupSpec>): Promise<void> => createBackup(bed, name, {
    clusterName: 'src', storageType: 'S3', s3: { path: `backups/${name}.db`, awsSecret: 'aws', endpoint: relay.endpoint, forcePathStyle: true }, ...spec,
  });

  await eventually('keys in the source', 60_000, async () => {
    await etcdPutMany(endpoint, [['first', 'x']]);
    return true;
  });
  await backup('live', { backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 } });
  await untilLogFollows(bed, endpoint, 'live');

  // One write of a chunk is held for good (the relay is never healed): the store never sees it, nor answers.
  relay.hold((method, p) => method === 'PUT' && p.includes('/live.db.changes/'), 1);
  await writingUntil(endpoint, 'a chunk\'s write held', 30_000, () => Promise.resolve(relay.held.length === 1 ? true : undefined));
  const heldAt = (await etcdStatus(endpoint)).revision;
  const caughtUp = await writingUntil(endpoint, `the change log past revision ${heldAt} again, the held write still unanswered`, 120_000, () => changeLogThrough(bed, 'live', heldAt + 5));
  assert.ok((caughtUp.status?.changeLog?.rpoSeconds ?? Infinity) < 10, `RPO back under 10 s: ${JSON.stringify(caughtUp.status?.changeLog)}`);

  // A one-shot backup whose first write is held.
  relay.hold((method, p) => method === 'PUT' && p.startsWith('/backups/once.db'), 1);
  await backup('once', {});
  // While it hangs its status says what is under way, from which member, and since when.
  const running = await eventually('the hung backup shown in progress', 60_000, async () => (await getBackup(bed, 'once')).status?.inProgress);
  t.diagnostic(`in progress: ${JSON.stringify(running)}`);
  assert.match(running.object ?? '', /once\.db/);
  assert.match(running.member ?? '', /:2379/);
  const once = await eventually('the one-shot backup taken', 120_000, async () => {
    const b = await getBackup(bed, 'once');
    if (b.status?.succeeded === false) throw new Error(b.status.reason ?? 'backup failed');
    return b.status?.succeeded ? b : undefined;
  });
  assert.equal(relay.held.length, 2, `its write was held: ${JSON.stringify(relay.held)}`);
  assert.ok((once.status?.lastBackup?.size ?? 0) > 0);
  assert.equal(once.status?.inProgress, undefined, 'nothing in progress once it is taken');
  operator.succeeded();
});
