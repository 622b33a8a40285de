/**
 * Scenarios on one cluster at a time: scaling, failover (detection and full recovery) and a rolling upgrade
 * under a continuous writer. Each returns raw samples in milliseconds; run.ts summarises them.
 */
import type { CoreV1Api, V1Service } from '@kubernetes/client-node';
import type { ApiTransport } from '../src/runtime/transport.js';
import { eventually } from '../test/support/lab.js';
import type { OperatorProcess } from '../test/support/operator-process.js';
import { startWriteLoad, untilServing } from '../test/support/write-load.js';
import { benchCluster, inNamespace } from './bench-cluster.js';

const progress = (scenario: string, fields: Record<string, number>): void => { process.stderr.write(`${JSON.stringify({ scenario, ...fields })}\n`); };

async function timed(step: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await step();
  return performance.now() - started;
}

export interface ScaleSamples { up3to5: number[]; down5to3: number[]; join3to4: number[] }

/** Spec change → all ready at the new size, on one cluster: 3→5 and 5→3, and 3→4 (one member joining). */
export async function scaling(core: CoreV1Api, transport: ApiTransport, runs: number, version: string): Promise<ScaleSamples> {
  return inNamespace(core, async (namespace) => {
    const c = benchCluster(core, transport, namespace, 'scale');
    await c.create({ size: 3, version });
    await c.settle(3);
    const s: ScaleSamples = { up3to5: [], down5to3: [], join3to4: [] };
    const resize = (size: number) => timed(async () => { await c.patch({ size }); await c.settle(size); });
    for (let run = 0; run < runs; run++) {
      s.up3to5.push(await resize(5));
      s.down5to3.push(await resize(3));
      s.join3to4.push(await resize(4));
      await resize(3);
      progress('scale', { run: run + 1, up3to5: Math.round(s.up3to5.at(-1) ?? 0), down5to3: Math.round(s.down5to3.at(-1) ?? 0), join3to4: Math.round(s.join3to4.at(-1) ?? 0) });
    }
    return s;
  });
}

export interface FailoverSamples { detection: number[]; recovery: number[] }

/** The time of the operator's first action on a cluster at or after `since` (its JSON log), if any yet. */
function firstActionAt(operator: OperatorProcess, key: string, since: number): number | undefined {
  for (const line of operator.logs) {
    if (!line.includes('"acting"') || !line.includes(key)) continue;
    const entry = JSON.parse(line) as { time?: string; key?: string; msg?: string };
    const at = Date.parse(entry.time ?? '');
    if (entry.msg === 'acting' && entry.key === key && at >= since) return at;
  }
  return undefined;
}

/**
 * A follower's pod deleted (emptyDir: the member is replaced): detection is the time to the operator's first
 * action, recovery the time until the cluster is back at full size with every member ready.
 */
export async function failover(core: CoreV1Api, transport: ApiTransport, operator: OperatorProcess, runs: number, version: string): Promise<FailoverSamples> {
  return inNamespace(core, async (namespace) => {
    const c = benchCluster(core, transport, namespace, 'failover');
    await c.create({ size: 3, version });
    await c.settle(3);
    const s: FailoverSamples = { detection: [], recovery: [] };
    for (let run = 0; run < runs; run++) {
      const leader = (await c.get()).status?.leader;
      const pods = (await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=failover' })).items;
      const victim = pods.find((p) => p.metadata?.name !== leader)?.metadata?.name ?? '';
      const deletedAt = Date.now();
      await core.deleteNamespacedPod({ name: victim, namespace, gracePeriodSeconds: 0 });
      const acted = await eventually('the operator acting', 60_000, async () => Promise.resolve(firstActionAt(operator, `${namespace}/failover`, deletedAt)));
      await eventually('back at full size', 180_000, async () => {
        const live = (await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=failover' })).items.map((p) => p.metadata?.name);
        return !live.includes(victim) && (await c.isSettled(3)) ? true : undefined;
      });
      s.detection.push(acted - deletedAt);
      s.recovery.push(Date.now() - deletedAt);
      progress('failover', { run: run + 1, detectionMs: s.detection.at(-1) ?? 0, recoveryMs: s.recovery.at(-1) ?? 0 });
    }
    return s;
  });
}

export interface UpgradeSamples { total: number[]; longestGap: number[]; acknowledged: number; lost: number }

/** A fresh 3-member cluster on `from`, rolled to `to` while a client writes through its Service without pause. */
export async function rollingUpgrade(core: CoreV1Api, transport: ApiTransport, runs: number, from: string, to: string): Promise<UpgradeSamples> {
  return inNamespace(core, async (namespace) => {
    const s: UpgradeSamples = { total: [], longestGap: [], acknowledged: 0, lost: 0 };
    for (let run = 0; run < runs; run++) {
      const name = `upgrade-${run}`;
      const c = benchCluster(core, transport, namespace, name);
      await c.create({ size: 3, version: from });
      await c.settle(3, from);
      const svc: V1Service = await core.readNamespacedService({ name: `${name}-client`, namespace });
      const endpoint = `http://${svc.spec?.clusterIP ?? ''}:2379`;
      await untilServing(endpoint);
      const load = startWriteLoad(endpoint, 'load-');
      s.total.push(await timed(async () => { await c.patch({ version: to }); await c.settle(3, to, 300_000); }));
      const report = await load.finish();
      s.longestGap.push(report.longestGapMs);
      s.acknowledged += report.acknowledged;
      s.lost += report.lost.length;
      progress('upgrade', { run: run + 1, totalMs: Math.round(s.total.at(-1) ?? 0), longestGapMs: report.longestGapMs, lost: report.lost.length });
    }
    return s;
  });
}
