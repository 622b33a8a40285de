/**
 * Many clusters at once: N three-member EtcdClusters created together; time until all are Available; the
 * operator's peak memory, CPU time and API requests per cluster (from its own rest_client_requests_total);
 * then its API requests per minute while every cluster is idle, minute by minute (it must not grow).
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import type { ApiTransport } from '../src/runtime/transport.js';
import type { OperatorProcess } from '../test/support/operator-process.js';
import { eventually } from '../test/support/lab.js';
import { benchCluster, inNamespace } from './bench-cluster.js';
import { counterTotal, cpuSeconds, rssMiB } from '../test/support/process-usage.js';

export interface ManyClusters {
  clusters: number;
  allAvailableMs: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  /** Operator CPU time from the first create to all Available. */
  cpuSeconds: number;
  apiRequestsPerCluster: number;
  /** API requests in each idle minute after all were Available. */
  idleRequestsPerMinute: number[];
}

const apiRequests = async (operator: OperatorProcess): Promise<number> =>
  counterTotal(await (await fetch(await operator.metricsUrl())).text(), 'rest_client_requests_total');

export async function manyClusters(core: CoreV1Api, transport: ApiTransport, operator: OperatorProcess, count: number, version: string, idleMinutes: number): Promise<ManyClusters> {
  return inNamespace(core, async (namespace) => {
    const clusters = Array.from({ length: count }, (_, i) => benchCluster(core, transport, namespace, `many-${i}`));
    const rssBeforeMiB = rssMiB(operator.pid);
    let rssPeakMiB = rssBeforeMiB;
    const sampler = setInterval(() => { rssPeakMiB = Math.max(rssPeakMiB, rssMiB(operator.pid)); }, 250);
    try {
      const cpuBefore = cpuSeconds(operator.pid);
      const requestsBefore = await apiRequests(operator);
      const started = performance.now();
      await Promise.all(clusters.map((c) => c.create({ size: 3, version })));
      let available = 0;
      await eventually(`${count} clusters Available`, 900_000, async () => {
        const settled = await Promise.all(clusters.map((c) => c.isSettled(3)));
        const now = settled.filter(Boolean).length;
        if (now !== available) process.stderr.write(`${JSON.stringify({ scenario: 'many-clusters', available: now, of: count, ms: Math.round(performance.now() - started) })}\n`);
        available = now;
        return now === count ? true : undefined;
      });
      const allAvailableMs = Math.round(performance.now() - started);
      const cpu = Math.round((cpuSeconds(operator.pid) - cpuBefore) * 10) / 10;
      const apiRequestsPerCluster = Math.round(((await apiRequests(operator)) - requestsBefore) / count);
      const idleRequestsPerMinute: number[] = [];
      for (let minute = 0; minute < idleMinutes; minute++) {
        const before = await apiRequests(operator);
        await new Promise((r) => setTimeout(r, 60_000));
        idleRequestsPerMinute.push((await apiRequests(operator)) - before);
        process.stderr.write(`${JSON.stringify({ scenario: 'many-clusters', idleMinute: minute + 1, apiRequests: idleRequestsPerMinute.at(-1) })}\n`);
      }
      return { clusters: count, allAvailableMs, rssBeforeMiB, rssPeakMiB, cpuSeconds: cpu, apiRequestsPerCluster, idleRequestsPerMinute };
    } finally {
      clearInterval(sampler);
    }
  });
}
