import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pointToVerify, verifyName } from '../../src/controllers/backup/verify.js';
import type { EtcdBackup } from '../../src/api/etcd-backup.js';

test('a verification\'s cluster is named for its backup and is always a valid cluster name', () => {
  assert.equal(verifyName('nightly'), 'nightly-verify');
  assert.equal(verifyName('db.nightly'), 'db-nightly-verify', 'no dot: it would break the member host names');
  assert.equal(verifyName('7-days'), 'v7-days-verify', 'a letter first');
  const long = verifyName(`a${'-b'.repeat(100)}`);
  assert.ok(long.length <= 54 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(long), long);
});

test('a continuous backup is verified at its change log\'s newest revision once that is past its snapshot; any other at its snapshot', () => {
  const backup = (continuous: boolean, etcdRevision: number, throughRevision?: number): EtcdBackup => ({
    apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdBackup', metadata: { name: 'b', namespace: 'n' },
    spec: { storageType: 'S3', ...(continuous ? { continuous: {} } : {}) },
    status: { etcdRevision, ...(throughRevision === undefined ? {} : { changeLog: { throughRevision } }) },
  });
  assert.equal(pointToVerify(backup(true, 6, 9)), 9);
  assert.equal(pointToVerify(backup(true, 9, 9)), undefined, 'nothing logged past the snapshot: the snapshot alone');
  assert.equal(pointToVerify(backup(true, 6)), undefined, 'no change log stored yet');
  assert.equal(pointToVerify(backup(false, 6, 9)), undefined, 'no longer continuous: a log left behind is not what is promised');
});
