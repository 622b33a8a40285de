import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { snapshotCommand } from '../../src/cli/snapshot.js';
import { DATA_LOST_EXIT, SNAPSHOT_REFUSED_EXIT } from '../../src/k8s/member-pod.js';
import { RESTORED_BEFORE, readRefusal, refusalText, snapshotRefused } from '../../src/controllers/restore/backup-refusal.js';
import { UsageError } from '../../src/cli/usage.js';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { seal, sealingKey } from '../../src/storage/sealed.js';
import { Readable } from 'node:stream';

/** A snapshot as etcd sends one: whole 512-byte pages, then the sha256 of them. */
const snapshot = (pages: number): Buffer => {
  const db = randomBytes(pages * 512);
  return Buffer.concat([db, createHash('sha256').update(db).digest()]);
};
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A member's restore step: a store directory, the member's volume and its termination message, all under a temporary root. */
function member(t: { after: (fn: () => void) => void }): { store: string; to: string; log: string; fetch: (name: string) => Promise<number> } {
  const root = mkdtempSync(join(tmpdir(), 'fetch-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const [store, volume] = [join(root, 'store'), join(root, 'volume')];
  mkdirSync(store);
  mkdirSync(volume);
  const to = join(volume, 'restore.db');
  const log = join(root, 'termination-log');
  return { store, to, log, fetch: (name) => snapshotCommand(['fetch', '--to', to, '--dir', store, '--name', name, '--termination-log', log]) };
}

test('snapshot fetch: a whole, checked snapshot lands at its place; nothing partial is left', async (t) => {
  const m = member(t);
  const good = snapshot(64);
  writeFileSync(join(m.store, 'snap.db'), good);
  writeFileSync(join(m.store, 'snap.db.sha256'), `${sha256(good)}\n`);
  assert.equal(await m.fetch('snap.db'), 0);
  assert.ok(readFileSync(m.to).equals(good));
  assert.equal(existsSync(`${m.to}.partial`), false);
});

test('snapshot fetch: a tampered backup is refused with its reason for the operator, and not fetched again when the step runs again', async (t) => {
  const m = member(t);
  const good = snapshot(64);
  const tampered = Buffer.from(good);
  tampered[good.length >> 1] = (tampered[good.length >> 1] ?? 0) ^ 1;
  writeFileSync(join(m.store, 'snap.db'), tampered);
  writeFileSync(join(m.store, 'snap.db.sha256'), `${sha256(good)}\n`);
  assert.equal(await m.fetch('snap.db'), SNAPSHOT_REFUSED_EXIT);
  assert.equal(existsSync(m.to), false, 'nothing for etcdutl to restore');
  assert.equal(existsSync(`${m.to}.partial`), false);
  const refusal = readRefusal(readFileSync(m.log, 'utf8'));
  assert.equal(refusal.reason, 'ChecksumMismatch');
  assert.match(refusal.message, /snap\.db: sha256 [0-9a-f]{64} does not match the stored [0-9a-f]{64}/);

  // The kubelet runs the failed step again: the same refusal at once, without reading the object (which now
  // could not be read at all: a directory in its place).
  rmSync(join(m.store, 'snap.db'));
  mkdirSync(join(m.store, 'snap.db'));
  rmSync(m.log);
  assert.equal(await m.fetch('snap.db'), SNAPSHOT_REFUSED_EXIT);
  assert.deepEqual(readRefusal(readFileSync(m.log, 'utf8')), refusal);

  // The restore's source edited since (another object): that one is fetched, the old refusal is not its.
  writeFileSync(join(m.store, 'fixed.db'), good);
  writeFileSync(join(m.store, 'fixed.db.sha256'), `${sha256(good)}\n`);
  assert.equal(await m.fetch('fixed.db'), 0);
  assert.ok(readFileSync(m.to).equals(good));
});

test('snapshot fetch: a missing object is no refusal of a backup (the step is retried), and leaves no mark', async (t) => {
  const m = member(t);
  assert.equal(await m.fetch('typo.db'), 1);
  assert.equal(existsSync(`${m.to}.refused`), false);
});

test('snapshot fetch: a snapshot etcd would refuse (its own hash) is refused as such; a store that fails is no refusal (the step is retried)', async (t) => {
  const m = member(t);
  const damaged = snapshot(64);
  damaged[700] = (damaged[700] ?? 0) ^ 1;
  writeFileSync(join(m.store, 'damaged.db'), damaged);
  writeFileSync(join(m.store, 'damaged.db.sha256'), `${sha256(damaged)}\n`);
  assert.equal(await m.fetch('damaged.db'), SNAPSHOT_REFUSED_EXIT);
  assert.equal(readRefusal(readFileSync(m.log, 'utf8')).reason, 'SnapshotRejected');

  const other = member(t);
  mkdirSync(join(other.store, 'unreadable.db'));
  writeFileSync(join(other.store, 'unreadable.db.sha256'), `${sha256(damaged)}\n`);
  assert.equal(await other.fetch('unreadable.db'), 1, 'EISDIR: not the backup\'s fault');
  assert.equal(existsSync(`${other.to}.refused`), false);
});

test('snapshot fetch: a sealed backup whose frame past the first was changed (its sha256 made to match) is refused as not authentic', async (t) => {
  const m = member(t);
  const key = randomBytes(32);
  const keyDir = join(m.store, '..', 'keys');
  mkdirSync(keyDir);
  writeFileSync(join(keyDir, 'k1'), key);
  // Three frames of a megabyte: the operator's probe opens the first one only; the fetch step reads them all.
  const parts: Buffer[] = [];
  for await (const b of seal(Readable.from([snapshot(6000)]), { codec: 'None', key: sealingKey('k1', key) })) parts.push(b);
  const changed = Buffer.concat(parts);
  changed[changed.length - 1000] = (changed[changed.length - 1000] ?? 0) ^ 1;
  writeFileSync(join(m.store, 'sealed.db'), changed);
  writeFileSync(join(m.store, 'sealed.db.sha256'), `${sha256(changed)}\n`);
  assert.equal(await snapshotCommand(['fetch', '--to', m.to, '--dir', m.store, '--name', 'sealed.db', '--key-dir', keyDir, '--termination-log', m.log]), SNAPSHOT_REFUSED_EXIT);
  assert.equal(readRefusal(readFileSync(m.log, 'utf8')).reason, 'BackupNotAuthentic');
  assert.equal(existsSync(m.to), false);
});

test('a refusal written by an earlier operator\'s fetch step (bare text) reads as etcd\'s snapshot refused', () => {
  assert.deepEqual(readRefusal('snap.db: etcd\'s own sha256 at its end does not match\n'), { reason: 'SnapshotRejected', message: 'snap.db: etcd\'s own sha256 at its end does not match' });
  assert.deepEqual(readRefusal('{"reason":"BackupNotAuthentic","message":"frame 3"}'), { reason: 'BackupNotAuthentic', message: 'frame 3' });
});

test('a refusal\'s words are cut to fit the kubelet\'s 4096-byte termination message, and still read back with their reason', () => {
  const text = refusalText({ reason: 'BackupNotAuthentic', message: `${'é'.repeat(5000)}\u0001` });
  assert.ok(Buffer.byteLength(text) <= 4096, `${Buffer.byteLength(text)} bytes`);
  assert.equal(readRefusal(text).reason, 'BackupNotAuthentic');
});

/** A member pod whose fetch step ran as given (its current and its previous run). */
const fetching = (state: V1ContainerStatus['state'], lastState?: V1ContainerStatus['lastState']): V1Pod => ({
  metadata: { name: 'r-1' },
  status: { initContainerStatuses: [{ name: 'fetch-snapshot', image: 'op', imageID: '', ready: false, restartCount: 1, ...(state ? { state } : {}), ...(lastState ? { lastState } : {}) }] },
});

test('the restore reads a member\'s refusal with its reason, in the step\'s current run or its previous one', () => {
  const refused = { terminated: { exitCode: SNAPSHOT_REFUSED_EXIT, message: refusalText({ reason: 'ChecksumMismatch', message: 'snap.db: sha256 a does not match the stored b' }) } };
  assert.deepEqual(snapshotRefused([fetching(refused)]), { reason: 'ChecksumMismatch', message: 'member r-1 refused the backup: snap.db: sha256 a does not match the stored b' });
  // Run again and failing otherwise (its credentials unreadable now, say): the refusal before it stands.
  assert.equal(snapshotRefused([fetching({ terminated: { exitCode: 1 } }, refused)])?.reason, 'ChecksumMismatch');
  assert.equal(snapshotRefused([fetching({ waiting: { reason: 'CrashLoopBackOff' } }, refused)])?.reason, 'ChecksumMismatch');
  // A store that did not answer is no refusal: the step is retried.
  assert.equal(snapshotRefused([fetching({ terminated: { exitCode: 1 } })]), undefined);
  assert.equal(snapshotRefused([fetching({ running: {} })]), undefined);
});

/** A restored member's volume and scratch as its restore steps see them, and etcdutl as far as the files go: it reads the snapshot and writes through the link. */
function restoringMember(t: { after: (fn: () => void) => void }) {
  const m = member(t);
  const volume = dirname(m.to);
  const scratchVolume = join(volume, '..', 'scratch');
  mkdirSync(scratchVolume);
  const paths = {
    snapshot: join(scratchVolume, 'restore.db'), into: join(scratchVolume, 'into'), scratch: join(scratchVolume, 'copy'),
    dataDir: join(volume, 'data'), complete: join(volume, 'restore-complete'), started: join(volume, '..', 'guard-started'),
  };
  const target = ['--to', paths.snapshot, '--into', paths.into, '--scratch', paths.scratch, '--complete', paths.complete];
  return {
    ...m, ...paths,
    fetch: (name: string) => snapshotCommand(['fetch', ...target, '--data-dir', paths.dataDir, '--dir', m.store, '--name', name, '--termination-log', m.log]),
    tidy: () => snapshotCommand(['tidy', ...target, '--started', paths.started]),
    /** What etcdutl leaves: the snapshot's bytes as the database; with `cut`, stopped after the log, before the database is done. */
    etcdutl: (cut = false) => {
      if (readdirSync(paths.into).length > 0) throw new Error('data-dir not empty');
      const db = readFileSync(paths.snapshot);
      mkdirSync(join(paths.into, 'member', 'wal'), { recursive: true });
      writeFileSync(join(paths.into, 'member', 'wal', '0000000000000000-0000000000000000.wal'), 'wal');
      if (cut) return;
      mkdirSync(join(paths.into, 'member', 'snap'), { recursive: true });
      writeFileSync(join(paths.into, 'member', 'snap', 'db'), db);
    },
  };
}

/** A good snapshot in the member's store, under snap.db. */
function stored(m: { store: string }): Buffer {
  const good = snapshot(64);
  writeFileSync(join(m.store, 'snap.db'), good);
  writeFileSync(join(m.store, 'snap.db.sha256'), `${sha256(good)}\n`);
  return good;
}

test('restore steps run again (a new sandbox) leave the member\'s data as it is: nothing fetched, etcdutl reads its own database and writes into the scratch, which is removed', async (t) => {
  const m = restoringMember(t);
  const good = stored(m);
  assert.equal(await m.fetch('snap.db'), 0);
  assert.ok(readFileSync(m.snapshot).equals(good));
  assert.equal(realpathSync(m.into), realpathSync(m.dataDir), 'etcdutl restores into the data directory');
  m.etcdutl();
  assert.equal(await m.tidy(), 0);
  for (const gone of [m.snapshot, m.into, m.scratch]) assert.equal(existsSync(gone), false, gone);
  assert.ok(existsSync(m.complete) && existsSync(m.started), 'the restore recorded complete, and etcd about to start');
  const db = join(m.dataDir, 'member', 'snap', 'db');
  // etcd ran and wrote since; then the node rebooted. The backup is gone from the store by now: nothing is fetched.
  writeFileSync(db, 'served since');
  rmSync(join(m.store, 'snap.db'));
  assert.equal(await m.fetch('snap.db'), 0);
  assert.equal(readFileSync(m.log, 'utf8'), RESTORED_BEFORE, 'the restore is told that what follows reads no snapshot');
  assert.equal(realpathSync(m.snapshot), realpathSync(db), 'etcdutl reads the member\'s own database, not a copy');
  assert.equal(realpathSync(m.into), realpathSync(m.scratch), 'and writes into the scratch');
  m.etcdutl();
  assert.equal(readFileSync(join(m.scratch, 'member', 'snap', 'db'), 'utf8'), 'served since');
  // Rebooted again before the tidy step: the scratch etcdutl filled is emptied for it, and it runs again.
  assert.equal(await m.fetch('snap.db'), 0);
  assert.deepEqual(readdirSync(m.scratch), []);
  m.etcdutl();
  assert.equal(await m.tidy(), 0);
  assert.equal(readFileSync(db, 'utf8'), 'served since', 'the data untouched');
  for (const gone of [m.snapshot, m.into, m.scratch]) assert.equal(existsSync(gone), false, gone);
});

test('restore steps after an etcdutl cut short (its log written, the restore not recorded complete: etcd never ran on it) restore again into an emptied data directory', async (t) => {
  const m = restoringMember(t);
  const good = stored(m);
  assert.equal(await m.fetch('snap.db'), 0);
  m.etcdutl(true);
  // The node rebooted before etcdutl finished: the steps run again from the first.
  assert.equal(await m.fetch('snap.db'), 0);
  assert.ok(readFileSync(m.snapshot).equals(good), 'fetched again');
  assert.deepEqual(readdirSync(m.dataDir), [], 'emptied for etcdutl, which refuses a directory that is not');
  assert.equal(realpathSync(m.into), realpathSync(m.dataDir));
});

test('snapshot fetch: a data directory without the record of a complete restore is a usage error, not a restore into nowhere', async (t) => {
  const m = restoringMember(t);
  await assert.rejects(snapshotCommand(['fetch', '--to', m.snapshot, '--into', m.into, '--scratch', m.scratch, '--data-dir', m.dataDir, '--dir', m.store, '--name', 'snap.db']), UsageError);
});

test('etcdutl failing over a member\'s restored data (its fetch step fetched nothing) is no refusal of the backup; failing on a fetched one is', () => {
  const pod = (fetchMessage: string): V1Pod => ({
    metadata: { name: 'r-1' },
    status: { initContainerStatuses: [
      { name: 'fetch-snapshot', image: 'op', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, message: fetchMessage } } },
      { name: 'restore-snapshot', image: 'etcd', imageID: '', ready: false, restartCount: 1, lastState: { terminated: { exitCode: 1, message: 'write /var/etcd-restore-scratch/copy/member/snap/db: no space left on device' } } },
    ] },
  });
  assert.equal(snapshotRefused([pod(RESTORED_BEFORE)]), undefined);
  assert.equal(snapshotRefused([pod('')])?.reason, 'SnapshotRejected');
});

test('restore steps whose member\'s data is gone after its restore was complete refuse to restore the snapshot again (data lost), fetching nothing', async (t) => {
  const m = restoringMember(t);
  stored(m);
  assert.equal(await m.fetch('snap.db'), 0);
  m.etcdutl();
  assert.equal(await m.tidy(), 0);
  rmSync(m.dataDir, { recursive: true });
  assert.equal(await m.fetch('snap.db'), DATA_LOST_EXIT);
  assert.match(readFileSync(m.log, 'utf8'), /restore was complete and it may have served since/);
  assert.equal(existsSync(m.snapshot), false, 'nothing fetched');
  assert.equal(existsSync(m.dataDir), false, 'nothing made');
});
