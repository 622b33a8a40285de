// Issue 32, finding 4: a rebuild from backup must not delete the surviving minority's claims at once: they may
// hold writes newer than the backup, which a person may still want. They are set aside like any removed member's,
// kept for the grace period, never restarted, and deleted after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';
import { takeBackup } from '../support/backup-bed.js';

const REMOVED = 'etcd.database.coreos.com/member-removed';
const GRACE_S = 45;

test('a rebuild from backup on volumes keeps the survivor\'s claim for the grace period, unused, then deletes it', async (t) => {
  const bed = await testbed(t, 'rebuild-claims');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const operator = startOperator(t, bed.namespace, ['--keep-removed-claims', String(GRACE_S)]);
  await bed.create('held', { size: 3, pod: ON_VOLUMES, restorePolicy: { fromLatestBackup: 'nightly' } });
  const founders = await eventually('3 members on volumes', 120_000, () => bed.settledMembers('held', 3));
  const endpoint = await bed.clientEndpoint('held');
  const keys = Array.from({ length: 200 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('200 keys written', 60_000, async () => { await etcdPutMany(endpoint, keys); return true; });
  await takeBackup(bed, 'nightly', { clusterName: 'held', storageType: 'S3', s3: { path: 'backups/held/nightly', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true } }, 60_000);
  // Acknowledged after the backup: on the survivor's volume only, once the majority is gone.
  await etcdPutMany(endpoint, [['after-backup', 'on the survivor']]);

  // Two members lost with their volumes, together; paused meanwhile so that neither is brought back half-way.
  await bed.patchSpec('held', { paused: true });
  await eventually('paused', 30_000, async () => ((await bed.get('held')).status?.phase === 'Paused' ? true : undefined));
  const [lostA, lostB, survivor = ''] = founders;
  for (const name of [lostA ?? '', lostB ?? '']) {
    await bed.core.deleteNamespacedPod({ name, namespace: bed.namespace, gracePeriodSeconds: 0 });
    await bed.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: bed.namespace });
  }
  const claim = async (name: string): Promise<V1PersistentVolumeClaim | undefined> =>
    (await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace })).items.find((c) => c.metadata?.name === name);
  await eventually('the two claims gone', 60_000, async () => (!(await claim(lostA ?? '')) && !(await claim(lostB ?? ''))) || undefined);
  const started = Date.now();
  await bed.patchSpec('held', { paused: false });

  // Watched throughout, twice a second: the survivor's claim is set aside and must live out its grace period,
  // however long the rebuild takes (on a busy machine it can outlast the grace period; the claim may then go
  // before it ends).
  let setAside: string | undefined;
  let claimGoneAt: number | undefined;
  const watchClaim = async (): Promise<void> => {
    const held = await claim(survivor).catch(() => null);
    if (held) setAside ??= held.metadata?.annotations?.[REMOVED];
    else if (held === undefined) claimGoneAt ??= Date.now();
  };
  const watching = setInterval(() => { void watchClaim(); }, 500);
  t.after(() => { clearInterval(watching); });
  const rebuilt = await eventually('rebuilt from the backup', 240_000, async () => {
    const c = await bed.get('held');
    const members = await bed.settledMembers('held', 3);
    return c.status?.rebuild?.completedAt && members ? { c, members } : undefined;
  });
  t.diagnostic(`rebuilt ${((Date.now() - started) / 1000).toFixed(1)} s after the majority was lost: ${rebuilt.members.join(', ')}`);
  assert.ok(!rebuilt.members.includes(survivor), 'no member runs on it');
  const held = await eventually('keys readable', 30_000, async () => etcdGetPrefix(await bed.clientEndpoint('held'), 'key-'));
  assert.equal(held.size, 200, 'every key of the backup');
  assert.equal((await etcdGetPrefix(await bed.clientEndpoint('held'), 'after-backup')).size, 0, 'the write after the backup is not in the rebuilt cluster: it is on the kept claim');

  // Deleted once the grace period is over, counted from when it was set aside.
  await eventually('the survivor\'s claim deleted after the grace period', (GRACE_S + 90) * 1000, () => Promise.resolve(claimGoneAt));
  clearInterval(watching);
  assert.ok(setAside, `the survivor's claim ${survivor} was deleted without being set aside first`);
  const lived = ((claimGoneAt ?? 0) - Date.parse(setAside)) / 1000;
  t.diagnostic(`the survivor's claim was deleted ${lived.toFixed(1)} s after it was set aside (grace ${GRACE_S} s), ${(((claimGoneAt ?? 0) - started) / 1000).toFixed(1)} s into the rebuild`);
  assert.ok(lived >= GRACE_S, `kept for the grace period: ${lived} s`);
  operator.succeeded();
});
