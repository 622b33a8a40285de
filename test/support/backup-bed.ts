import type { TestContext } from 'node:test';
import { eventually } from './lab.js';
import { isReady, testbed } from './cluster-testbed.js';
import type { Testbed } from './cluster-testbed.js';
import { startMinio } from './minio.js';
import type { Minio } from './minio.js';
import { startOperator } from './operator-process.js';
import type { TestOperator } from './operator-process.js';

/**
 * Where a backup's test starts: its namespace with an operator, a MinIO with the bucket `backups` and its
 * CoreOS `aws` Secret, and a one-member cluster `src` ready to be written to and backed up.
 */
export async function backupBed(t: TestContext, prefix: string): Promise<{ bed: Testbed; minio: Minio; operator: TestOperator }> {
  const bed = await testbed(t, prefix);
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const operator = startOperator(t, bed.namespace);
  await bed.create('src', { size: 1 });
  await eventually('the source ready', 120_000, async () => {
    const pods = await bed.pods('src');
    return (await bed.get('src')).status?.phase === 'Running' && pods.length === 1 && pods.every(isReady) ? true : undefined;
  });
  return { bed, minio, operator };
}
