// Issue 19, safety: a change log chunk is stored only once its sha256 is beside it. A chunk whose sha256 was
// never written cannot be read back (a restore refuses it), so a log that resumed after such a chunk would
// report revisions as stored that no restore can bring back. The link to the store breaks for the sha256
// writes of the log's chunks, then heals; then the operator is killed while a chunk's sha256 write is held
// (a crash between the writes) and another started: every revision the status says is stored must read back.
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdBackup } from '../../src/api/etcd-backup.js';
import { readChunk } from '../../src/controllers/restore/replay.js';
import { changeLogPrefix, chunksOf, holes } from '../../src/storage/change-log.js';
import { S3Storage } from '../../src/storage/s3.js';
import { CHECKSUM_SUFFIX } from '../../src/storage/storage.js';
import { eventually } from '../support/lab.js';
import { storedKeys } from '../support/minio.js';
import type { Minio } from '../support/minio.js';
import { etcdPutMany, etcdStatus } from '../support/etcd-gateway.js';
import { backupBed, changeLogThrough, createBackup, writingUntil } from '../support/backup-bed.js';
import { startOperator } from '../support/operator-process.js';
import { storeRelay } from '../support/store-relay.js';

test('a change log chunk whose sha256 was not written is not counted as stored, its write cut or its writer killed: the log writes its revisions again, and every revision through throughRevision reads back', async (t) => {
  const { bed, minio, operator } = await backupBed(t, 'log-commit');
  const relay = await storeRelay(t, minio.endpoint);
  const endpoint = await bed.clientEndpoint('src');
  await createBackup(bed, 'live', {
    clusterName: 'src', storageType: 'S3', s3: { path: 'backups/src.db', awsSecret: 'aws', endpoint: relay.endpoint, forcePathStyle: true },
    backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 },
  });
  const through = async (revision: number): Promise<EtcdBackup> => eventually(`the change log following through revision ${revision}`, 90_000, () => changeLogThrough(bed, 'live', revision));

  // The client Service answers once its endpoints are programmed.
  await eventually('keys before the snapshot', 60_000, async () => {
    await etcdPutMany(endpoint, Array.from({ length: 50 }, (_, i): [string, string] => [`before-${i}`, `v${i}`]));
    return true;
  });
  const snapshotRevision = (await through((await etcdStatus(endpoint)).revision)).status?.etcdRevision ?? 0;
  assert.ok(snapshotRevision > 0, 'a full snapshot under the log');

  // The link to the store breaks for the sha256 writes of the log's chunks.
  const chunkChecksum = (method: string, p: string): boolean => method === 'PUT' && p.includes('/src.db.changes/') && p.split('?')[0]?.endsWith(CHECKSUM_SUFFIX) === true;
  relay.refuse(chunkChecksum);
  // A write every second (each its own revision) until `enough` says the fault has met the log's writes.
  const writeUntil = (what: string, enough: () => boolean): Promise<true> => writingUntil(endpoint, `${what} within a minute`, 60_000, () => Promise.resolve(enough() ? true : undefined));
  await writeUntil('the sha256 of three chunks cut', () => new Set(relay.refused.map((r) => r.path)).size >= 3);
  const cut = (await etcdStatus(endpoint)).revision;
  relay.heal();
  await etcdPutMany(endpoint, [['after-cut', 'x']]);
  await assertStoredReadsBack(t, minio, snapshotRevision, cut, (await through((await etcdStatus(endpoint)).revision)).status?.changeLog?.throughRevision ?? 0);

  // The operator killed while a chunk's sha256 write is under way; another takes over.
  relay.hold(chunkChecksum);
  await writeUntil('a chunk\'s sha256 write held', () => relay.held.length >= 1);
  const killed = (await etcdStatus(endpoint)).revision;
  operator.succeeded();
  await operator.kill();
  relay.heal();
  startOperator(t, bed.namespace);
  await etcdPutMany(endpoint, [['after-kill', 'x']]);
  await assertStoredReadsBack(t, minio, snapshotRevision, killed, (await through((await etcdStatus(endpoint)).revision)).status?.changeLog?.throughRevision ?? 0);
});

/**
 * The store as a restore reads it: every revision after the snapshot through `stored` (what the status
 * reports, past the fault's last revision `faulted`) is in a chunk with its sha256, reads back through it,
 * and no chunk is left without its sha256.
 */
async function assertStoredReadsBack(t: TestContext, minio: Minio, snapshotRevision: number, faulted: number, stored: number): Promise<void> {
  assert.ok(stored > faulted, `the log reports ${stored}, past the fault's last revision ${faulted}`);
  const names = await storedKeys(minio, 'backups', changeLogPrefix('src.db'));
  const uncommitted = names.filter((n) => !n.endsWith(CHECKSUM_SUFFIX) && !names.includes(`${n}${CHECKSUM_SUFFIX}`));
  const committed = chunksOf(names.filter((n) => names.includes(`${n}${CHECKSUM_SUFFIX}`)), 'src.db');
  assert.deepEqual(holes(committed, snapshotRevision + 1, stored), [],
    `every revision after the snapshot (${snapshotRevision}) through the reported ${stored} is in a chunk with its sha256; chunks: ${committed.map((c) => `${c.from}-${c.to}`).join(', ')}`);
  assert.deepEqual(uncommitted, [], 'no chunk is left without its sha256');
  const storage = new S3Storage({ bucket: 'backups', endpoint: minio.endpoint, forcePathStyle: true, region: 'us-east-1', accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey });
  t.after(() => { storage.destroy(); });
  let read = 0;
  for (const chunk of committed) read += (await readChunk({ storage, keys: new Map() }, chunk)).revisions.length;
  assert.ok(read >= stored - snapshotRevision, `${read} revisions read back through their sha256`);
}
