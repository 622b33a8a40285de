import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DEFAULT_ETCD_VERSION } from '../../src/api/etcd-cluster.js';
import { backupBed, changeLogThrough, createBackup, restoreToEnd, takeBackup } from '../support/backup-bed.js';
import { etcdBinary, eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdPutMany, etcdRangeAll } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';
import type { Minio } from '../support/minio.js';
import { HELD_SUFFIX, datedPeriodicBackups } from '../../src/storage/naming.js';

// A backup's revision was the member's, read before the snapshot began: under writes the snapshot held a later one
// (a user's trial: status 2433, the snapshot 2495), so the status said less than the backup held, and a point-in-time
// restore chose a snapshot past its target. What the stored object holds is read here by etcd's own etcdutl.
test('under a steady stream of writes, a backup\'s status and name give the revision its snapshot holds, as etcdutl reads it', async (t) => {
  const bed = await testbed(t, 'backuprev');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  startOperator(t, bed.namespace);
  await bed.create('busy', { size: 1 });
  await eventually('the cluster Running', 120_000, async () => {
    const c = await bed.get('busy').catch(() => undefined);
    const pods = await bed.pods('busy');
    return c?.status?.phase === 'Running' && pods.length === 1 && pods.every(isReady) ? true : undefined;
  });
  const endpoint = await bed.clientEndpoint('busy');
  await eventually('the client Service answering', 30_000, async () => { await etcdPutMany(endpoint, [['first', 'x']]); return true; });
  const writes = steadyWrites(endpoint);
  const dir = mkdtempSync(join(tmpdir(), 'backuprev-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  try {
    await eventually('writes flowing', 30_000, () => Promise.resolve(writes.written() > 200 ? true : undefined));
    for (let i = 0; i < 3; i++) {
      const taken = await takeBackup(bed, `b${i}`, { clusterName: 'busy', storageType: 'S3', s3: { path: `backups/b${i}.db`, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true } });
      const object = await minio.client.send(new GetObjectCommand({ Bucket: 'backups', Key: `b${i}.db` }));
      const file = join(dir, `b${i}.db`);
      writeFileSync(file, await object.Body?.transformToByteArray() ?? new Uint8Array());
      const held = JSON.parse(execFileSync(etcdBinary(DEFAULT_ETCD_VERSION, 'etcdutl'), ['snapshot', 'status', file, '--write-out=json'], { encoding: 'utf8' })) as { revision: number };
      t.diagnostic(`b${i}: status ${String(taken.status?.etcdRevision)}, the snapshot ${held.revision}, ${writes.written()} writes so far`);
      assert.equal(taken.status?.etcdRevision, held.revision, `b${i}: the status names the revision the snapshot holds`);
      assert.match(taken.status.conditions?.find((c) => c.type === 'Succeeded')?.message ?? '', new RegExp(`: revision ${held.revision},`));
    }
  } finally {
    await writes.stop();
  }
  assert.ok(writes.written() > 500, `writes kept coming during the backups (${writes.written()})`);
});

/** Four writers, one revision per request, until `stop` is called; how many writes were acknowledged so far. */
function steadyWrites(endpoint: string): { written: () => number; stop: () => Promise<void> } {
  let writing = true;
  let written = 0;
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; writing; i++) {
      if (await etcdPutMany(endpoint, [[`w${w}/${i % 500}`, `value-${i}`]]).then(() => true, () => false)) written++;
    }
  });
  return { written: () => written, stop: async () => { writing = false; await Promise.allSettled(writers); } };
}

/** The text of an object in the bucket. */
async function objectText(minio: Minio, key: string): Promise<string> {
  return (await (await minio.client.send(new GetObjectCommand({ Bucket: 'backups', Key: key }))).Body?.transformToString()) ?? '';
}

// The same trial: a point-in-time restore to a revision between a periodic snapshot's name (the member's revision
// before it began) and the revision it held chose it, and failed SnapshotPastTarget after making its cluster.
test('a point-in-time restore to a revision a periodic snapshot taken under writes holds past its name starts from an older one, and holds the source at that revision', async (t) => {
  const { bed, minio } = await backupBed(t, 'pitrheld', 1);
  const endpoint = await bed.clientEndpoint('src');
  await eventually('the client Service answering', 30_000, async () => { await etcdPutMany(endpoint, [['first', 'x']]); return true; });
  const writes = steadyWrites(endpoint);
  t.after(() => writes.stop());
  const s3 = { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true };
  await createBackup(bed, 'src', { clusterName: 'src', storageType: 'S3', s3, backupPolicy: { backupIntervalInSecond: 10 }, continuous: { chunkSeconds: 2 } });
  // A snapshot that holds more than its name says, with an older one before it to start from instead.
  const past = await eventually('a periodic snapshot holding past its name, not the first', 180_000, async () => {
    const listed = await minio.client.send(new ListObjectsV2Command({ Bucket: 'backups', Prefix: 'src.db_v' }));
    const names = (listed.Contents ?? []).map((o) => o.Key ?? '');
    const snapshots = datedPeriodicBackups(names, 'src.db');
    const newer = snapshots.slice(1).reverse().find((s) => names.includes(`${s.name}${HELD_SUFFIX}`));
    return newer ? { ...newer, held: Number((await objectText(minio, `${newer.name}${HELD_SUFFIX}`)).trim()) } : undefined;
  });
  t.diagnostic(`${past.name}: named ${past.revision}, holds ${past.held}`);
  assert.ok(past.held > past.revision, 'the held revision is past the name\'s');
  const target = past.held - 1;
  await eventually('the change log through the target', 120_000, async () => changeLogThrough(bed, 'src', target));
  await writes.stop();
  const done = await restoreToEnd(bed, 'back', { etcdCluster: { name: 'back' }, backupStorageType: 'S3', s3, pointInTime: { revision: target }, revisionBump: 0, clusterSpec: { size: 1 } }, 300_000);
  assert.equal(done.status?.phase, 'Completed', JSON.stringify(done.status));
  assert.notEqual(done.status.pointInTime?.snapshot, past.name, 'not the snapshot past the target');
  assert.ok((done.status.pointInTime?.snapshotRevision ?? Infinity) <= target, JSON.stringify(done.status.pointInTime));
  const restored = await etcdRangeAll(await bed.clientEndpoint('back'));
  assert.deepEqual(restored.kvs, (await etcdRangeAll(endpoint, target)).kvs, 'the restored store is the source at the target');
});
