import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataGuardCommand } from '../../src/cli/data-guard.js';

test('the data guard refuses an empty data directory to a member that started before, and only to it', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'data-guard-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const [data, marker] = [join(root, 'data'), join(root, 'scratch', 'started')];
  const guard = (...extra: string[]): number => dataGuardCommand([`--data-dir=${data}`, `--marker=${marker}`, ...extra]);

  assert.equal(guard('--expect-data'), 3, 'started before (the operator says so), no data: refused');
  assert.equal(existsSync(marker), false, 'a refusal leaves no marker');
  assert.equal(guard(), 0, 'a new member starts on an empty directory');
  assert.equal(existsSync(marker), true, 'and the pod remembers that it started one');
  assert.equal(guard(), 3, 'the same pod again (a reboot) on an empty directory: refused');
  mkdirSync(join(data, 'member', 'wal'), { recursive: true });
  assert.equal(guard(), 3, 'a directory without a write-ahead log holds no data');
  writeFileSync(join(data, 'member', 'wal', '0000000000000000-0000000000000000.wal'), 'x');
  assert.equal(guard(), 0, 'with its data it starts');
  assert.equal(guard('--expect-data'), 0);
});

test('the data guard of a restoring pod leaves its marker to the restore\'s last step: a reboot during the restore is no member that lost its data', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'data-guard-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const [data, marker] = [join(root, 'data'), join(root, 'scratch', 'started')];
  const guard = (): number => dataGuardCommand([`--data-dir=${data}`, `--marker=${marker}`, '--marked-later']);
  assert.equal(guard(), 0);
  assert.equal(existsSync(marker), false, 'no marker before the data is there');
  assert.equal(guard(), 0, 'rebooted before the restore was through: it runs again');
  mkdirSync(join(root, 'scratch'));
  writeFileSync(marker, 'the tidy step');
  assert.equal(guard(), 3, 'marked, and the data gone: refused');
});

test('the data guard removes a restore\'s snapshot left beside the data, and only once the data is there', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'data-guard-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const [data, marker, leftover] = [join(root, 'data'), join(root, 'scratch', 'started'), join(root, 'restore.db')];
  writeFileSync(leftover, 'snapshot');
  assert.equal(dataGuardCommand([`--data-dir=${data}`, `--marker=${marker}`, `--leftover=${leftover}`]), 0);
  assert.equal(existsSync(leftover), true, 'before the restore wrote the data, a snapshot is not a leftover');
  mkdirSync(join(data, 'member', 'wal'), { recursive: true });
  writeFileSync(join(data, 'member', 'wal', '0000000000000000-0000000000000000.wal'), 'x');
  assert.equal(dataGuardCommand([`--data-dir=${data}`, `--marker=${marker}`, `--leftover=${leftover}`]), 0);
  assert.equal(existsSync(leftover), false, 'with the data in place, the snapshot is gone from the volume');
});

test('data another user owns, on a volume that did not apply the pod\'s fsGroup, is told as such (exit 5), never judged lost (exit 3)', (t) => {
  // The guard must run as a user other than the data's owner: a child process as the pods' non-root user.
  if (process.getuid?.() !== 0) throw new Error('this test switches user: run it as root, as npm test does');
  const root = mkdtempSync(join(tmpdir(), 'data-guard-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  chmodSync(root, 0o755);
  const [data, marker] = [join(root, 'data'), join(root, 'scratch', 'started')];
  mkdirSync(join(data, 'member', 'wal'), { recursive: true, mode: 0o700 });
  writeFileSync(join(data, 'member', 'wal', '0000000000000000-0000000000000000.wal'), 'x');
  chmodSync(data, 0o700);
  const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const run = spawnSync(process.execPath, [main, 'data-guard', `--data-dir=${data}`, `--marker=${marker}`, '--expect-data'], { uid: 65532, gid: 65532, encoding: 'utf8' });
  assert.equal(run.status, 5, run.stderr);
  assert.match(run.stderr, /not usable by user 65532.*fsGroup/);
  assert.equal(existsSync(marker), false);
  // The top directory given to the user but not what is under it (a chown without -R): still not usable, never "lost".
  chownSync(data, 65532, 65532);
  const half = spawnSync(process.execPath, [main, 'data-guard', `--data-dir=${data}`, `--marker=${marker}`, '--expect-data'], { uid: 65532, gid: 65532, encoding: 'utf8' });
  assert.equal(half.status, 5, half.stderr);
  assert.match(half.stderr, /member: EACCES/);
});
