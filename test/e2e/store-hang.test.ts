// Issue 19: a store that stops answering a request (a connection gone silent: a dropped NAT entry, a stuck
// load balancer) must not stop backups. The request is given up after a time without progress and sent
// again. A change log stuck on one chunk's write would store nothing more while its RPO grew without end, and
// a backup stuck on its upload would never finish, nor let its EtcdBackup be reconciled again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdBackup } from '../../src/api/etcd-backup.js';
import { eventually } from '../support/lab.js';
import { etcdPutMany, etcdStatus } from '../support/etcd-gateway.js';
import { backupBed } from '../support/backup-bed.js';
import { storeRelay } from '../support/store-relay.js';

test('a store request that never answers is given up and sent again: the change log catches up by itself, and a backup whose upload hung finishes', async (t) => {
  const { bed, minio } = await backupBed(t, 'store-hang');
  const relay = await storeRelay(t, minio.endpoint);
  const endpoint = await bed.clientEndpoint('src');
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdbackups`;
  const backup = (name: string, spec: Record<string, unknown>): Promise<unknown> => bed.transport.call('POST', path, {
    apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', metadata: { name },
    spec: { clusterName: 'src', storageType: 'S3', s3: { path: `backups/${name}.db`, awsSecret: 'aws', endpoint: relay.endpoint, forcePathStyle: true }, ...spec },
  });
  const get = async (name: string): Promise<EtcdBackup> => (await bed.transport.call('GET', `${path}/${name}`)) as EtcdBackup;
  // A key every second while `what` is awaited: the log has revisions to store all along.
  const writingUntil = async <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> => {
    let i = 0;
    return eventually(what, timeoutMs, async () => {
      await etcdPutMany(endpoint, [[`k-${i++}`, `${Date.now()}`]]);
      await new Promise((r) => setTimeout(r, 1000));
      return probe();
    });
  };

  await eventually('keys in the source', 60_000, async () => {
    await etcdPutMany(endpoint, [['first', 'x']]);
    return true;
  });
  await backup('live', { backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 } });
  const following = async (revision: number): Promise<EtcdBackup | undefined> => {
    const b = await get('live');
    const log = b.status?.conditions?.find((c) => c.type === 'ChangeLog');
    return log?.status === 'True' && (b.status?.changeLog?.throughRevision ?? 0) >= revision ? b : undefined;
  };
  await writingUntil('the change log following', 90_000, async () => following((await etcdStatus(endpoint)).revision));

  // One write of a chunk is held for good (the relay is never healed): the store never sees it, nor answers.
  relay.hold((method, p) => method === 'PUT' && p.includes('/live.db.changes/'), 1);
  await writingUntil('a chunk\'s write held', 30_000, () => Promise.resolve(relay.held.length === 1 ? true : undefined));
  const heldAt = (await etcdStatus(endpoint)).revision;
  const caughtUp = await writingUntil(`the change log past revision ${heldAt} again, the held write still unanswered`, 120_000, async () => following(heldAt + 5));
  assert.ok((caughtUp.status?.changeLog?.rpoSeconds ?? Infinity) < 10, `RPO back under 10 s: ${JSON.stringify(caughtUp.status?.changeLog)}`);

  // A one-shot backup whose first write is held.
  relay.hold((method, p) => method === 'PUT' && p.startsWith('/backups/once.db'), 1);
  await backup('once', {});
  const once = await eventually('the one-shot backup taken', 120_000, async () => {
    const b = await get('once');
    if (b.status?.succeeded === false) throw new Error(b.status.reason ?? 'backup failed');
    return b.status?.succeeded ? b : undefined;
  });
  assert.equal(relay.held.length, 2, `its write was held: ${JSON.stringify(relay.held)}`);
  assert.ok((once.status?.lastBackup?.size ?? 0) > 0);
});
