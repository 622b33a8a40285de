// Issue 31, finding 4: two EtcdBackups whose paths share a prefix ("prod" and "prod_v2") in one bucket. Each
// keeps and lists only its own periodic backups: prod's retention never deletes prod_v2's objects, nor counts them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { etcdPutMany } from '../support/etcd-gateway.js';
import { backupBed, createBackup, getBackup } from '../support/backup-bed.js';
import { storedKeys } from '../support/minio.js';
import { CHECKSUM_SUFFIX } from '../../src/storage/storage.js';

/** A periodic backup's objects: its base, "_v", the revision, "_", the time (not its .sha256 beside it). */
const own = (keys: string[], base: string): string[] => keys.filter((k) => new RegExp(`^${base}_v\\d+_[^_]+$`).test(k) && !k.endsWith(CHECKSUM_SUFFIX));

test('backups at paths "prod" and "prod_v2" of one bucket keep apart: each retention keeps its own newest two and touches nothing of the other\'s', async (t) => {
  const { bed, minio, operator } = await backupBed(t, 'names', 1);
  const endpoint = await bed.clientEndpoint('src');
  await eventually('keys in the source', 60_000, async () => { await etcdPutMany(endpoint, [['k', 'v']]); return true; });
  const paths = { prod: 'backups/prod', 'prod-v2': 'backups/prod_v2' };
  for (const [name, path] of Object.entries(paths)) {
    await createBackup(bed, name, {
      clusterName: 'src', storageType: 'S3', s3: { path, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
      backupPolicy: { backupIntervalInSecond: 3, maxBackups: 2 },
    });
  }
  // Each takes at least four, so each retention has run with the other's objects in the bucket.
  const taken = new Map<string, Set<string>>(Object.keys(paths).map((n) => [n, new Set()]));
  await eventually('four backups taken by each', 180_000, async () => {
    for (const name of Object.keys(paths)) {
      await etcdPutMany(endpoint, [[`k-${name}`, String(Date.now())]]);
      const last = (await getBackup(bed, name)).status?.lastBackup?.path;
      if (last) taken.get(name)?.add(last);
    }
    return [...taken.values()].every((s) => s.size >= 4) ? true : undefined;
  });
  const keys = await storedKeys(minio, 'backups', 'prod');
  const prod = own(keys, 'prod');
  const prodV2 = own(keys, 'prod_v2');
  t.diagnostic(`stored: ${keys.join(', ')}`);
  assert.equal(prod.length, 2, `prod keeps its newest two: ${prod.join(', ')}`);
  assert.equal(prodV2.length, 2, `prod_v2 keeps its newest two: ${prodV2.join(', ')}`);
  for (const [name, objects] of [['prod', prod], ['prod-v2', prodV2]] as const) {
    const status = (await getBackup(bed, name)).status;
    assert.equal(status?.backups, 2, `${name} counts only its own backups`);
    assert.ok(objects.includes(status.lastBackup?.path?.replace(/^.*\//, '') ?? ''), `${name}'s last backup (${status.lastBackup?.path}) is one of its own`);
  }
  operator.succeeded();
});
