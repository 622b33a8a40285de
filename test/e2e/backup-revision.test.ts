import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DEFAULT_ETCD_VERSION } from '../../src/api/etcd-cluster.js';
import { takeBackup } from '../support/backup-bed.js';
import { etcdBinary, eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';

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
  // Four writers, one revision per request, for as long as the backups are taken.
  let writing = true;
  let written = 0;
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; writing; i++) {
      // A write refused now and then (a slow answer) changes nothing here: only that writes keep coming.
      if (await etcdPutMany(endpoint, [[`w${w}/${i % 500}`, `value-${i}`]]).then(() => true, () => false)) written++;
    }
  });
  const dir = mkdtempSync(join(tmpdir(), 'backuprev-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  try {
    await eventually('writes flowing', 30_000, () => Promise.resolve(written > 200 ? true : undefined));
    for (let i = 0; i < 3; i++) {
      const taken = await takeBackup(bed, `b${i}`, { clusterName: 'busy', storageType: 'S3', s3: { path: `backups/b${i}.db`, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true } });
      const object = await minio.client.send(new GetObjectCommand({ Bucket: 'backups', Key: `b${i}.db` }));
      const file = join(dir, `b${i}.db`);
      writeFileSync(file, await object.Body?.transformToByteArray() ?? new Uint8Array());
      const held = JSON.parse(execFileSync(etcdBinary(DEFAULT_ETCD_VERSION, 'etcdutl'), ['snapshot', 'status', file, '--write-out=json'], { encoding: 'utf8' })) as { revision: number };
      t.diagnostic(`b${i}: status ${String(taken.status?.etcdRevision)}, the snapshot ${held.revision}, ${written} writes so far`);
      assert.equal(taken.status?.etcdRevision, held.revision, `b${i}: the status names the revision the snapshot holds`);
      assert.match(taken.status.conditions?.find((c) => c.type === 'Succeeded')?.message ?? '', new RegExp(`: revision ${held.revision},`));
    }
  } finally {
    writing = false;
    await Promise.allSettled(writers);
  }
  assert.ok(written > 500, `writes kept coming during the backups (${written})`);
});
