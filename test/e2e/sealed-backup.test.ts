// Issue 19, item 3: compressed and encrypted backups restore; a wrong key, a changed byte or an object that is not
// sealed (issue 31: encryption stripped by whoever can write the bucket) is refused with a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { BackupSpec, EtcdBackup, EtcdRestore, RestoreSpec } from '../../src/api/etcd-backup.js';
import { eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';
import { createBackup, getBackup, restoreToEnd } from '../support/backup-bed.js';

async function keySecret(bed: Testbed, name: string, keys: Record<string, Buffer>, replace = false): Promise<void> {
  const body = { metadata: { name }, data: Object.fromEntries(Object.entries(keys).map(([id, key]) => [id, key.toString('base64')])) };
  if (replace) await bed.core.replaceNamespacedSecret({ name, namespace: bed.namespace, body });
  else await bed.core.createNamespacedSecret({ namespace: bed.namespace, body });
}

test('compressed and encrypted backups (S3 from the operator, a volume from a pod) restore exactly; a rotated key still opens the old; a missing key, a wrong key, a changed byte and a plain object under a key ring are refused', async (t) => {
  const bed = await testbed(t, 'sealed');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const [k1, k2] = [randomBytes(32), randomBytes(32)];
  await keySecret(bed, 'backup-keys', { k1 });
  await bed.core.createNamespacedPersistentVolumeClaim({ namespace: bed.namespace, body: {
    metadata: { name: 'backups' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  } });
  const operator = startOperator(t, bed.namespace);
  const s3 = (path: string): NonNullable<BackupSpec['s3']> => ({ path, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true });
  // Succeeded or refused: some of these backups must fail.
  const backUp = async (name: string, spec: Omit<BackupSpec, 'clusterName'>): Promise<EtcdBackup> => {
    await createBackup(bed, name, { clusterName: 'src', ...spec });
    return eventually(`backup ${name} done`, 120_000, async () => {
      const b = await getBackup(bed, name);
      return b.status?.conditions?.[0] ? b : undefined;
    });
  };
  const restore = (name: string, spec: RestoreSpec): Promise<EtcdRestore> => restoreToEnd(bed, name, spec);
  const holdsAll = async (cluster: string): Promise<void> => {
    const held = await eventually(`${cluster}: keys readable`, 60_000, async () => etcdGetPrefix(await bed.clientEndpoint(cluster), 'key-'));
    assert.equal(held.size, keys.length, `${cluster}: every key`);
    for (const [k, v] of keys) assert.equal(held.get(k), v, `${cluster}: ${k}`);
  };

  await bed.create('src', { size: 1 });
  await eventually('the source Running', 120_000, async () => {
    const pods = await bed.pods('src');
    return (await bed.get('src')).status?.phase === 'Running' && pods.length === 1 && pods.every(isReady) ? true : undefined;
  });
  // Values like real objects: repetitive text with a unique part, so compression has something to find.
  const keys = Array.from({ length: 5000 }, (_, i): [string, string] => [`key-${i}`, `{"kind":"ConfigMap","metadata":{"name":"cm-${i}","namespace":"default"},"data":{"v":"value-${i}"}}`]);
  await eventually('5,000 keys written', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('src'), keys); return true; });

  // S3, sealed by the operator process: Brotli and key k1.
  const sealed = await backUp('s3-k1', { storageType: 'S3', s3: s3('backups/src.db'), compression: 'Brotli', encryption: { keySecret: 'backup-keys', keyId: 'k1' } });
  assert.equal(sealed.status?.succeeded, true, JSON.stringify(sealed.status));
  const last = sealed.status.lastBackup;
  assert.deepEqual([last?.compression, last?.keyId], ['Brotli', 'k1']);
  const object = Buffer.from(await (await minio.client.send(new GetObjectCommand({ Bucket: 'backups', Key: 'src.db' }))).Body?.transformToByteArray() ?? []);
  assert.equal(object.subarray(0, 8).toString(), 'EOPSEAL1');
  assert.equal(createHash('sha256').update(object).digest('hex'), last?.sha256, 'the recorded sha256 is of the stored bytes');
  assert.ok(!object.includes(Buffer.from('"cm-4321"')), 'no plaintext in the object');
  t.diagnostic(`sealed S3 backup: ${object.length} bytes (Brotli, AES-256-GCM)`);

  // Rotation: k2 added; a Volume backup (sealed in the snapshot pod, with the Secret mounted) takes it, Gzip.
  await keySecret(bed, 'backup-keys', { k1, k2 }, true);
  const onVolume = await backUp('vol-k2', { storageType: 'Volume', volume: { claimName: 'backups', path: 'src.db' }, compression: 'Gzip', encryption: { keySecret: 'backup-keys', keyId: 'k2' } });
  assert.equal(onVolume.status?.succeeded, true, JSON.stringify(onVolume.status));
  assert.deepEqual([onVolume.status.lastBackup?.compression, onVolume.status.lastBackup?.keyId], ['Gzip', 'k2']);

  // A backup naming a key its Secret lacks is a condition, not a crash, and writes nothing.
  const keyless = await backUp('no-such-key', { storageType: 'S3', s3: s3('backups/never.db'), encryption: { keySecret: 'backup-keys', keyId: 'k9' } });
  assert.deepEqual([keyless.status?.succeeded, keyless.status?.conditions?.[0]?.reason], [false, 'KeyMissing']);
  assert.match(keyless.status?.conditions?.[0]?.message ?? '', /no key "k9".*holds: k1, k2/);

  // Both restore, the old one by the key it names (k1), after the rotation.
  const fromS3 = await restore('from-s3', { etcdCluster: { name: 'r-s3' }, backupStorageType: 'S3', s3: s3('backups/src.db'), encryption: { keySecret: 'backup-keys' }, clusterSpec: { size: 1 } });
  assert.equal(fromS3.status?.phase, 'Completed', JSON.stringify(fromS3.status));
  await holdsAll('r-s3');
  const fromVolume = await restore('from-vol', { etcdCluster: { name: 'r-vol' }, backupStorageType: 'Volume', volume: { claimName: 'backups', path: 'src.db' }, encryption: { keySecret: 'backup-keys' }, clusterSpec: { size: 1 } });
  assert.equal(fromVolume.status?.phase, 'Completed', JSON.stringify(fromVolume.status));
  await holdsAll('r-vol');

  // A plain snapshot, with its sha256, where a restore that names keys looks: what anyone who can write the
  // bucket could put in place of a sealed one.
  const plain = await backUp('plain', { storageType: 'S3', s3: s3('backups/plain.db') });
  assert.equal(plain.status?.succeeded, true, JSON.stringify(plain.status));

  // Refusals, each before any cluster is made: the key is not held; the key is wrong; a byte was changed (and
  // the sha256 beside it changed to match, so only the encryption's tags can tell); the object is not sealed.
  await keySecret(bed, 'only-k2', { k2 });
  await keySecret(bed, 'wrong-k1', { k1: randomBytes(32) });
  const changed = Buffer.from(object);
  changed[Math.floor(changed.length / 2)] = (changed[Math.floor(changed.length / 2)] ?? 0) ^ 0x40;
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'changed.db', Body: changed }));
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'changed.db.sha256', Body: `${createHash('sha256').update(changed).digest('hex')}\n` }));
  for (const [name, path, secret, reason, message] of [
    ['no-key', 'backups/src.db', 'only-k2', 'BackupKeyMissing', /encrypted with key "k1", which the key Secret does not hold \(it holds: k2\)/],
    ['wrong-key', 'backups/src.db', 'wrong-k1', 'BackupNotAuthentic', /does not open with key "k1"/],
    ['changed', 'backups/changed.db', 'backup-keys', 'BackupNotAuthentic', /changed/],
    ['stripped', 'backups/plain.db', 'backup-keys', 'BackupNotAuthentic', /is not encrypted, but keys were given/],
  ] as const) {
    const refused = await restore(name, { etcdCluster: { name: `never-${name}` }, backupStorageType: 'S3', s3: s3(path), encryption: { keySecret: secret }, clusterSpec: { size: 1 } });
    assert.deepEqual([refused.status?.phase, refused.status?.reason], ['Failed', reason], name);
    assert.match(refused.status?.conditions?.[0]?.message ?? '', message, name);
    assert.equal(await bed.get(`never-${name}`).then(() => 'exists', () => 'absent'), 'absent', `${name}: no cluster made`);
  }
  operator.succeeded();
});
