// Issue 31: a restore of Kubernetes' own data, end to end. A second kube-apiserver of the lab stores into an
// EtcdCluster the operator manages; real objects go through it (namespaces of ConfigMaps up to 900 KiB, Events on
// its short-TTL leases, a leader-election Lease renewed with resourceVersion preconditions, a namespace emptied with
// one delete of a collection). The etcd is backed up continuously and restored to the revision of a recorded list,
// with the default revision bump; a kube-apiserver started on the restored cluster must list exactly the objects
// recorded at that revision (their resourceVersions raised where the change log wrote them), tell a watch that
// resumes from a resourceVersion the source gave out later that its history is gone, and never give out one of
// those resourceVersions again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RestoreSpec } from '../../src/api/etcd-backup.js';
import { eventually } from '../support/lab.js';
import { etcdStatus } from '../support/etcd-gateway.js';
import { backupBed, changeLogThrough, createBackup, restoreToEnd } from '../support/backup-bed.js';
import { startTenantApiserver } from '../support/tenant-apiserver.js';
import type { TenantApiserver } from '../support/tenant-apiserver.js';
import { bigValue } from '../support/real-workload.js';
import { keyRevision, storeRevisionOf } from '../../src/controllers/restore/bumped-revisions.js';

interface KubeObject { metadata: { name: string; namespace?: string; resourceVersion?: string } }
interface KubeList { metadata: { resourceVersion?: string }; items: KubeObject[] }

const configMap = (namespace: string, name: string, data: Record<string, string>): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
const list = (items: unknown[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

/** The objects of `path` as the API server lists them at `resourceVersion` exactly (read from etcd at that revision). */
async function listAt(kube: TenantApiserver, path: string, resourceVersion: string): Promise<KubeObject[]> {
  const got = JSON.parse(await kube.kubectl(['get', '--raw', `${path}?resourceVersion=${resourceVersion}&resourceVersionMatch=Exact`])) as KubeList;
  return got.items.sort((a, b) => `${a.metadata.namespace ?? ''}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace ?? ''}/${b.metadata.name}`));
}

const KINDS = ['/api/v1/namespaces', '/api/v1/configmaps', '/api/v1/events', '/apis/coordination.k8s.io/v1/leases'];

test('Kubernetes\' etcd backed up continuously and restored to a recorded point: a kube-apiserver on the restored cluster lists exactly the objects of that point', async (t) => {
  const { bed, minio, operator } = await backupBed(t, 'kube', 1);
  const etcdUrl = await bed.clientEndpoint('src');
  await eventually('the cluster answering through its client Service', 60_000, async () => (await etcdStatus(etcdUrl, { timeoutMs: 2000 })).revision);
  const kube = await startTenantApiserver(t, etcdUrl, { eventTtlSeconds: 20 });
  const s3 = { path: 'backups/kube.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true };
  await createBackup(bed, 'src', { clusterName: 'src', storageType: 'S3', s3, backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 } });
  await eventually('the change log following', 90_000, async () => changeLogThrough(bed, 'src', 1));

  // Objects as a cluster's users make them.
  await kube.kubectl(['create', '-f', '-'], list([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } },
    { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'controller-leader', namespace: 'team-a' }, spec: { holderIdentity: 'c-1', leaseDurationSeconds: 15, renewTime: new Date().toISOString().replace('Z', '000Z') } },
  ]));
  await kube.kubectl(['create', '-f', '-'], list(Array.from({ length: 150 }, (_, i) => configMap('team-a', `cm-${i}`, { index: String(i), payload: 'x'.repeat(2000) }))));
  await kube.kubectl(['create', '-f', '-'], list(Array.from({ length: 40 }, (_, i) => configMap('team-b', `cm-${i}`, { index: String(i) }))));
  await kube.kubectl(['create', '-f', '-'], list([0, 1].map((i) => configMap('team-b', `big-${i}`, { blob: bigValue(900 * 1024, `big-${i}`) }))));
  // A leader renewing its Lease (a guarded update: replace carries the resourceVersion read), and Events.
  const renewing = { on: true };
  const renewals = (async () => {
    for (let n = 0; renewing.on; n++) {
      const lease = JSON.parse(await kube.kubectl(['get', 'lease', 'controller-leader', '-n', 'team-a', '-o', 'json'])) as { spec: Record<string, unknown> };
      lease.spec.renewTime = new Date().toISOString().replace('Z', '000Z');
      lease.spec.leaseTransitions = n;
      await kube.kubectl(['replace', '-f', '-'], JSON.stringify(lease)).catch(() => undefined);
      await kube.kubectl(['create', '-f', '-'], JSON.stringify({
        apiVersion: 'v1', kind: 'Event', metadata: { name: `renewed.${n}`, namespace: 'team-a' }, involvedObject: { kind: 'Lease', name: 'controller-leader', namespace: 'team-a' },
        reason: 'Renewed', message: `renewal ${n}`, type: 'Normal',
      })).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  t.after(async () => { renewing.on = false; await renewals; });
  await new Promise((r) => setTimeout(r, 8000));

  // The point: what a list of ConfigMaps answered (its resourceVersion is etcd's revision then), and every other
  // kind as it was at that revision.
  const point = (JSON.parse(await kube.kubectl(['get', '--raw', '/api/v1/configmaps'])) as KubeList).metadata.resourceVersion ?? '';
  const recorded = await Promise.all(KINDS.map((k) => listAt(kube, k, point)));

  // After it: team-a's ConfigMaps deleted as one collection, a big one replaced, more renewals and Events.
  await kube.kubectl(['delete', 'configmaps', '--all', '-n', 'team-a', '--wait=false']);
  await kube.kubectl(['replace', '-f', '-'], JSON.stringify({ ...(JSON.parse(await kube.kubectl(['get', 'configmap', 'big-1', '-n', 'team-b', '-o', 'json'])) as object), data: { blob: bigValue(900 * 1024, 'big-1-v2') } }));
  await new Promise((r) => setTimeout(r, 5000));
  renewing.on = false;
  await renewals;
  const end = (await etcdStatus(etcdUrl)).revision;
  await eventually('the change log through the end', 60_000, async () => changeLogThrough(bed, 'src', end));
  await kube.stop();
  t.diagnostic(`point: revision ${point}, ${recorded.map((r, i) => `${r.length} ${KINDS[i]?.split('/').pop() ?? ''}`).join(', ')}; source ended at ${end}`);

  const spec: RestoreSpec = { etcdCluster: { name: 'restored' }, backupStorageType: 'S3', s3, pointInTime: { revision: Number(point) }, clusterSpec: { size: 1 } };
  const restore = await restoreToEnd(bed, 'to-point', spec, 300_000);
  assert.equal(restore.status?.phase, 'Completed', JSON.stringify(restore.status));
  const shift = { held: restore.status.pointInTime?.snapshotHeld ?? 0, bump: restore.status.pointInTime?.revisionBump ?? 0 };
  assert.equal(shift.bump, 1_000_000_000, 'the default bump, Kubernetes\' safe one');
  t.diagnostic(`restored: ${restore.status.conditions?.[0]?.message}; the snapshot held revision ${shift.held}`);

  // Kubernetes again, on the restored cluster: the same objects at that revision, byte for byte as it decodes them,
  // but for the resourceVersions of objects the change log wrote after the snapshot, raised by the bump.
  const again = await startTenantApiserver(t, await bed.clientEndpoint('restored'), { eventTtlSeconds: 20 });
  const restored = await Promise.all(KINDS.map((k) => listAt(again, k, String(storeRevisionOf(shift, Number(point))))));
  const raised = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, resourceVersion: String(keyRevision(shift, Number(o.metadata.resourceVersion))) } });
  for (const [i, kind] of KINDS.entries()) {
    const want = (recorded[i] ?? []).map(raised);
    const got = restored[i] ?? [];
    const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}@${o.metadata.resourceVersion ?? ''}`;
    assert.deepEqual(got.map(key), want.map(key), `${kind}: the same objects at their resourceVersions`);
    assert.deepEqual(got, want, `${kind}: every field as recorded`);
  }
  const teamA = JSON.parse(await again.kubectl(['get', 'configmaps', '-n', 'team-a', '-o', 'json'])) as KubeList;
  assert.equal(teamA.items.length, 150, 'kubectl get now: team-a\'s ConfigMaps as they were at the point, not deleted');

  // An informer that had seen the source's last resourceVersion resumes its watch from it: it is told that history
  // is gone (410 Expired) and lists again, rather than waiting for revisions that will mean other writes.
  const resumed = await again.kubectl(['get', '--raw', `/api/v1/configmaps?watch=1&resourceVersion=${end}`, '--request-timeout=20s']).catch((err: unknown) => (err as Error).message);
  assert.match(resumed, /"code":410/, `a watch from the source's revision ${end}: ${resumed.slice(0, 300)}`);
  const created = JSON.parse(await again.kubectl(['create', 'configmap', 'after-restore', '-n', 'team-b', '-o', 'json'])) as KubeObject;
  assert.ok(Number(created.metadata.resourceVersion) > end, `a write after the restore gets a resourceVersion (${created.metadata.resourceVersion}) past every one the source gave out (${end})`);
  operator.succeeded();
});
