// Issue 34, what must show 3: the test bed sees the failures it exists to catch. Outside the operator and outside
// Kubernetes, three real etcd processes on this host are broken by hand the way an operator must never break
// them: one member is killed and restarted alone with --force-new-cluster on its data, so that it serves as a
// cluster of its own beside the other two, which still have a quorum. The recorded clients go on sending to all
// three; the checker must name the anomaly that split brain makes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdBinary, eventually } from '../support/lab.js';
import { etcdStatus } from '../support/etcd-gateway.js';
import { startRecordedWorkload } from '../support/recorded-workload.js';
import { checkRecording } from '../support/history-check.js';
import { owned } from '../support/child-stop.js';

/** Loopback ports of this test's own: clients 42301-42303, peers 42311-42313, the split member's new peer port 42314. */
const clientUrl = (i: number): string => `http://127.0.0.1:${42301 + i}`;
const peerUrl = (i: number, port = 42311 + i): string => `http://127.0.0.1:${port}`;

test('a member cut off and restarted alone with --force-new-cluster, clients sent to both sides: the checker names the anomaly', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'split-brain-'));
  const running = new Set<ChildProcess>();
  t.after(() => {
    for (const p of running) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const names = ['m0', 'm1', 'm2'];
  const initialCluster = names.map((n, i) => `${n}=${peerUrl(i)}`).join(',');
  const start = (i: number, extra: string[], peer = peerUrl(i)): ChildProcess => {
    const log = openSync(join(dir, `${names[i] ?? ''}.log`), 'a');
    const p = owned(spawn(etcdBinary('3.5.35'), [
      `--name=${names[i] ?? ''}`, `--data-dir=${join(dir, names[i] ?? '')}`, `--listen-client-urls=${clientUrl(i)}`, `--advertise-client-urls=${clientUrl(i)}`,
      `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`, ...extra,
    ], { stdio: ['ignore', log, log] }));
    running.add(p);
    p.on('exit', () => { running.delete(p); });
    return p;
  };
  const token = `split-${Date.now()}`;
  const members = names.map((_, i) => start(i, [`--initial-cluster=${initialCluster}`, '--initial-cluster-state=new', `--initial-cluster-token=${token}`]));
  const endpoints = names.map((_, i) => clientUrl(i));
  const led = async (e: string): Promise<true | undefined> => (['', '0'].includes((await etcdStatus(e, { timeoutMs: 1000 })).leaderId) ? undefined : true);
  for (const e of endpoints) await eventually(`${e} answering with a leader`, 30_000, () => led(e));

  const workload = startRecordedWorkload(endpoints, { keys: 4, pauseMs: 20 });
  await new Promise((r) => setTimeout(r, 4000));
  // m2 killed and restarted alone on its data, listening for peers where m0 and m1 do not look: two clusters now.
  const victim = members[2];
  assert.ok(victim);
  victim.kill('SIGKILL');
  if (victim.exitCode === null && victim.signalCode === null) await new Promise((r) => { victim.once('exit', r); });
  start(2, ['--force-new-cluster'], peerUrl(2, 42314));
  await eventually('m2 serving alone', 30_000, async () => {
    const s = await etcdStatus(clientUrl(2), { timeoutMs: 1000 });
    return s.leaderId === s.memberId ? true : undefined;
  });
  await new Promise((r) => setTimeout(r, 10_000));
  const recording = await workload.stop();
  const summary = await checkRecording(recording, `split-brain-${Date.now()}`);
  t.diagnostic(`${summary.checked} of ${summary.operations} operations checked: ${summary.anomaly ?? 'no anomaly'}`);
  assert.match(summary.anomaly ?? '', /the clients' history is not linearizable: \[\{"key":"lin-[0-9a-f]{8}\/[0-3]"/, 'porcupine names a key whose history cannot be linearized');
});
