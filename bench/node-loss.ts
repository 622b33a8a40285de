/**
 * Node loss and node drains on the three-node lab: the time from a node killed to the cluster back at full
 * size with every member ready (and the operator's share: from the node seen NotReady), and the time to drain
 * every node in turn (a rolling node upgrade, uncordoning each after its drain) under a continuous writer.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import type { ApiTransport } from '../src/runtime/transport.js';
import { eventually, lab, labCommand } from '../test/support/lab.js';
import { nodeReadiness, untilReadiness } from '../test/support/lab-pods.js';
import { kubectlAsync } from '../test/support/kubectl.js';
import { startWriteLoad, untilServing } from '../test/support/write-load.js';
import { ON_VOLUMES } from '../test/support/cluster-testbed.js';
import { benchCluster, inNamespace } from './bench-cluster.js';

const progress = (scenario: string, fields: Record<string, number | string>): void => { process.stderr.write(`${JSON.stringify({ scenario, ...fields })}\n`); };

export interface NodeLossSamples { total: number[]; afterNotReady: number[]; lost: number }

/** The leader's node killed (members without volumes), then revived, and the members spread over it again, before the next run. */
export async function nodeLoss(core: CoreV1Api, transport: ApiTransport, runs: number, version: string): Promise<NodeLossSamples> {
  return inNamespace(core, async (namespace) => {
    const c = benchCluster(core, transport, namespace, 'nodeloss');
    await c.create({ size: 3, version });
    await c.settle(3);
    const svc = await core.readNamespacedService({ name: 'nodeloss-client', namespace });
    const endpoint = `http://${svc.spec?.clusterIP ?? ''}:2379`;
    await untilServing(endpoint);
    const load = startWriteLoad(endpoint, 'load-');
    const s: NodeLossSamples = { total: [], afterNotReady: [], lost: 0 };
    const pods = async (): Promise<{ name: string; node: string }[]> => (await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=nodeloss' })).items
      .map((p) => ({ name: p.metadata?.name ?? '', node: p.spec?.nodeName ?? '' }));
    try {
      for (let run = 0; run < runs; run++) {
        const leader = (await c.get()).status?.leader;
        const node = (await pods()).find((p) => p.name === leader)?.node ?? '';
        const killedAt = Date.now();
        await labCommand(['fault', 'node-kill', node]);
        try {
          const notReadyAt = await eventually('the node NotReady', 120_000, async () => ((await nodeReadiness(core, node)) !== 'True' ? Date.now() : undefined));
          await eventually('back at full size, none on the killed node', 300_000, async () =>
            ((await c.isSettled(3)) && !(await pods()).some((p) => p.node === node) ? true : undefined));
          s.total.push(Date.now() - killedAt);
          s.afterNotReady.push(Date.now() - notReadyAt);
        } finally {
          await labCommand(['heal', 'node-kill', node]);
        }
        await untilReadiness(core, node, 'True', 120_000);
        // Members that shared a node meanwhile are spread over the revived one again, the move finished (three
        // pods, not the four of a move under way): the next kill takes one member.
        await eventually('spread over every node again', 300_000, async () => {
          const now = await pods();
          return now.length === 3 && new Set(now.map((p) => p.node)).size === 3 && (await c.isSettled(3)) ? true : undefined;
        });
        progress('node-loss', { run: run + 1, totalMs: s.total.at(-1) ?? 0, afterNotReadyMs: s.afterNotReady.at(-1) ?? 0 });
      }
    } finally {
      s.lost = (await load.finish()).lost.length;
    }
    return s;
  });
}

export interface DrainSamples { total: number[]; longestGap: number[]; lost: number }

/** Every node drained in turn and uncordoned after, a cluster of 3 members on volumes written to throughout. */
export async function drainAll(core: CoreV1Api, transport: ApiTransport, runs: number, version: string): Promise<DrainSamples> {
  return inNamespace(core, async (namespace) => {
    const s: DrainSamples = { total: [], longestGap: [], lost: 0 };
    for (let run = 0; run < runs; run++) {
      const name = `drain-${run}`;
      const c = benchCluster(core, transport, namespace, name);
      await c.create({ size: 3, version, pod: ON_VOLUMES });
      await c.settle(3);
      const svc = await core.readNamespacedService({ name: `${name}-client`, namespace });
      const endpoint = `http://${svc.spec?.clusterIP ?? ''}:2379`;
      await untilServing(endpoint);
      const load = startWriteLoad(endpoint, 'load-');
      const started = Date.now();
      for (const { name: node } of lab().nodes) {
        try {
          await kubectlAsync(['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=600s'], 660_000);
        } finally {
          await kubectlAsync(['uncordon', node], 60_000);
        }
      }
      await c.settle(3);
      s.total.push(Date.now() - started);
      const report = await load.finish();
      s.longestGap.push(report.longestGapMs);
      s.lost += report.lost.length;
      progress('drain-all', { run: run + 1, totalMs: s.total.at(-1) ?? 0, longestGapMs: report.longestGapMs, lost: report.lost.length });
    }
    return s;
  });
}
