import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { ApiTransport } from '../../src/runtime/transport.js';
import { owned } from '../support/child-stop.js';
import { LeaderElector } from '../../src/runtime/leader-election.js';
import { microTime } from '../../src/runtime/time.js';
import { adminKubeConfig, eventually, lab, testNamespace } from '../support/lab.js';

interface Event { identity: string; event: 'leading' | 'stopped' | 'reconcile'; at?: number; start?: number; end?: number }

const harness = fileURLToPath(new URL('../support/elected-controller.js', import.meta.url));
const LEASE_MS = 4000;
const RETRY_MS = 500;

function startElected(namespace: string, identity: string, events: Event[]): ChildProcess {
  const child = owned(spawn(process.execPath, [harness, lab().kubeconfig, namespace, identity], { stdio: ['ignore', 'pipe', 'ignore'] }));
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as Event);
  });
  return child;
}

test('two operator processes: one reconciles, the other takes over after SIGKILL, never both at once', async (t) => {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const namespace = await testNamespace(t, 'election');
  const events: Event[] = [];
  const processes = ['a', 'b'].map((id) => startElected(namespace, id, events));
  t.after(() => {
    for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  });
  let made = 0;
  const touch = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `cm-${made++}` } } });
  };

  const first = await eventually('a leader', 30_000, () => Promise.resolve(events.find((e) => e.event === 'leading')));
  await touch(10);
  await eventually('the leader reconciles', 20_000, () =>
    Promise.resolve(events.filter((e) => e.event === 'reconcile').length >= 10 ? true : undefined));
  assert.deepEqual([...new Set(events.filter((e) => e.event === 'reconcile').map((e) => e.identity))], [first.identity],
    'only the leader reconciles');

  const leaderProcess = processes[first.identity === 'a' ? 0 : 1];
  const standby = first.identity === 'a' ? 'b' : 'a';
  const killedAt = Date.now();
  leaderProcess?.kill('SIGKILL');
  const second = await eventually('the standby to lead', 3 * LEASE_MS, () =>
    Promise.resolve(events.find((e) => e.event === 'leading' && e.identity === standby)));
  const takeoverMs = (second.at ?? 0) - killedAt;
  t.diagnostic(`takeover ${takeoverMs} ms after SIGKILL (lease ${LEASE_MS} ms, retry ${RETRY_MS} ms)`);
  assert.ok(takeoverMs <= LEASE_MS + 2 * RETRY_MS + 1000, `took over within the lease duration plus polling (${takeoverMs} ms)`);

  await touch(5);
  await eventually('the new leader reconciles', 20_000, () =>
    Promise.resolve(events.some((e) => e.event === 'reconcile' && e.identity === standby) ? true : undefined));

  const intervals = (id: string): [number, number][] =>
    events.filter((e) => e.event === 'reconcile' && e.identity === id).map((e) => [e.start ?? 0, e.end ?? 0]);
  const overlaps = intervals(first.identity).filter(([s1, e1]) => intervals(standby).some(([s2, e2]) => s1 < e2 && s2 < e1));
  assert.deepEqual(overlaps, [], 'no reconcile of one process overlaps one of the other');
  assert.ok(intervals(standby).every(([s]) => s >= (second.at ?? Infinity)), 'the standby reconciled nothing before it led');
});

/**
 * One elector in a namespace of its own (renew deadline 2 s), once it leads: its transport, the signal of its
 * term, and how to stop it (the shutdown, then the end of its run).
 */
async function soleLeader(t: TestContext, name: string): Promise<{ transport: ApiTransport; namespace: string; signal: AbortSignal; stop: () => Promise<void> }> {
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  const namespace = await testNamespace(t, name);
  const elector = new LeaderElector(transport, {
    namespace, leaseName: name, identity: 'leader', leaseDurationMs: LEASE_MS, renewDeadlineMs: 2000, retryPeriodMs: RETRY_MS,
  });
  const shutdown = new AbortController();
  t.after(() => { shutdown.abort(); });
  let leading: AbortSignal | undefined;
  const done = elector.run(shutdown.signal, (signal) => {
    leading = signal;
    return Promise.resolve();
  });
  const signal = await eventually('leadership', 10_000, () => Promise.resolve(leading));
  return { transport, namespace, signal, stop: async () => { shutdown.abort(); await done; } };
}

test('a leader that can no longer renew its lease stops leading within the renew deadline', async (t) => {
  const { transport, namespace, signal, stop } = await soleLeader(t, 'stepdown');

  // Another holder takes the lease over (as after a partition) and keeps renewing it. The clock starts when
  // its write has landed: until then the leader's own renewals may still win the race for the record.
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/stepdown`;
  const takeOver = async (): Promise<void> => {
    const lease = await transport.call('GET', leasePath);
    await transport.call('PUT', leasePath, {
      ...(lease as object),
      spec: { holderIdentity: 'intruder', leaseDurationSeconds: 60, renewTime: microTime(Date.now()) },
    });
  };
  await eventually('the intruder holds the lease', 10_000, async () => {
    await takeOver();
    return true;
  });
  const takenAt = Date.now();
  const intruder = setInterval(() => { takeOver().catch(() => undefined); }, 200);
  t.after(() => { clearInterval(intruder); });
  await eventually('step-down', 10_000, () => Promise.resolve(signal.aborted || undefined));
  const steppedDownMs = Date.now() - takenAt;
  t.diagnostic(`stepped down ${steppedDownMs} ms after losing the lease (renew deadline 2000 ms)`);
  assert.ok(steppedDownMs <= 2000 + 2 * RETRY_MS + 1000, `stepped down in ${steppedDownMs} ms`);
  await stop();
});

test('a leader whose renewals succeed keeps leading past many renew deadlines', async (t) => {
  const { signal, stop } = await soleLeader(t, 'keeps');
  // Renewals are bounded by the time left to the deadline, a fraction of a millisecond included: each must
  // go through, or the leader would step down every renew deadline.
  await new Promise((r) => setTimeout(r, 4 * 2000));
  assert.equal(signal.aborted, false, `still leading after four renew deadlines (${String(signal.reason)})`);
  await stop();
});
