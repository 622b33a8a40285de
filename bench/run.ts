/**
 * `npm run bench`: each scenario several times on the lab, in one run; writes bench/results/latest.json and
 * latest.md with medians, min and max. Runs per scenario: BENCH_RUNS (default 5). BENCH_SCENARIOS picks
 * some of `bringup,backup` (default all).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { randomBytes } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { adminKubeConfig, eventually, lab } from '../test/support/lab.js';
import { staticCluster } from './static-cluster.js';
import { spawnOperator } from '../test/support/operator-process.js';
import { GROUP, VERSION } from '../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../src/api/etcd-cluster.js';
import { allCrds } from '../src/api/crds.js';
import { ApiTransport } from '../src/runtime/transport.js';
import { ensureCrd } from '../test/support/test-crd.js';
import { summarise } from './stats.js';
import { backupThroughput } from './backup-throughput.js';
import type { BackupThroughput } from './backup-throughput.js';
import type { Summary } from './stats.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const scenarios = new Set((process.env.BENCH_SCENARIOS ?? 'bringup,backup').split(','));
const core = adminKubeConfig().makeApiClient(CoreV1Api);

/** Milliseconds from the first create request to every member pod Ready. */
async function staticBringUp(members: number, image: string): Promise<number> {
  const namespace = `bench-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
    const { service, pods } = staticCluster(namespace, members, image, lab().clusterDomain);
    const started = performance.now();
    await core.createNamespacedService({ namespace, body: service });
    await Promise.all(pods.map((body) => core.createNamespacedPod({ namespace, body })));
    await eventually(`${members} static members Ready`, 120_000, async () => {
      const list = await core.listNamespacedPod({ namespace });
      const ready = list.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === members ? true : undefined;
    });
    return performance.now() - started;
  } finally {
    await core.deleteNamespace({ name: namespace, body: { gracePeriodSeconds: 0 } });
  }
}

/** Milliseconds from creating an EtcdCluster to condition Available with every member ready. */
async function operatorBringUp(transport: ApiTransport, members: number, version: string): Promise<number> {
  const namespace = `bench-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
    const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`;
    const started = performance.now();
    await transport.call('POST', path, { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name: 'bench' }, spec: { size: members, version } });
    await eventually(`${members} members Available`, 180_000, async () => {
      const c = (await transport.call('GET', `${path}/bench`)) as EtcdCluster;
      const available = c.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True');
      return available && c.status?.readyMembers === members ? true : undefined;
    });
    return performance.now() - started;
  } finally {
    await core.deleteNamespace({ name: namespace, body: { gracePeriodSeconds: 0 } });
  }
}

interface Row { scenario: string; summary: Summary; ratioToStatic?: number }

async function main(): Promise<void> {
  const image = lab().etcdImages[0];
  if (!image) throw new Error('the lab lists no etcd image');
  const rows: Row[] = [];
  const staticMedian = new Map<number, number>();
  const sizes = [3, 5, 7];
  const measure = async (name: string, run: () => Promise<number>): Promise<Summary> => {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      samples.push(await run());
      process.stderr.write(`${JSON.stringify({ scenario: name, run: i + 1, ms: Math.round(samples.at(-1) ?? 0) })}\n`);
    }
    return summarise(samples);
  };
  for (const members of scenarios.has('bringup') ? [1, ...sizes] : []) {
    const summary = await measure(`static-${members}`, () => staticBringUp(members, image));
    staticMedian.set(members, summary.medianMs);
    rows.push({ scenario: `static baseline: ${members} member(s) created → all Ready`, summary });
  }
  const transport = new ApiTransport(adminKubeConfig());
  for (const crd of allCrds()) await ensureCrd(transport, crd);
  const operator = spawnOperator();
  try {
    const version = image.split(':v')[1] ?? '';
    for (const members of scenarios.has('bringup') ? sizes : []) {
      const summary = await measure(`operator-${members}`, () => operatorBringUp(transport, members, version));
      rows.push({ scenario: `operator: ${members}-member EtcdCluster created → Available, all ready`, summary,
        ratioToStatic: Math.round((summary.medianMs / (staticMedian.get(members) ?? summary.medianMs)) * 100) / 100 });
    }
  } finally {
    await operator.stop();
  }
  let backup: BackupThroughput | undefined;
  try {
    if (scenarios.has('backup')) backup = await backupThroughput(core, transport, runs);
  } finally {
    transport.agent.destroy();
  }
  const machine = { cpus: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  const versions = { kubernetes: lab().kubernetesVersion, etcdImage: image };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', `${JSON.stringify({ date: new Date().toISOString(), machine, versions, rows, backup }, null, 2)}\n`);
  const backupLines = backup ? [
    `## Backup of a ${Math.round(backup.dbBytes / 2 ** 20)} MiB database (one member), ${backup.etcdctl.runs} runs`, '',
    '| path | median ms | min ms | max ms | MiB/s (median) |', '|---|---|---|---|---|',
    ...([['etcdctl snapshot save → local file', backup.etcdctl], ['EtcdBackup → S3: the operator streams into MinIO on the lab', backup.s3],
      ['EtcdBackup → volume: a pod of the operator image streams into a file on the claim', backup.volume]] as const)
      .map(([name, x]) => `| ${name} | ${x.medianMs} | ${x.minMs} | ${x.maxMs} | ${Math.round(backup.dbBytes / 2 ** 20 / (x.medianMs / 1000))} |`),
    '', `Throughput / etcdctl's: volume ${backup.ratioVolume}, S3 ${backup.ratioS3}. Operator RSS during the S3 backups: ${backup.rssBeforeMiB} MiB before, ${backup.rssPeakMiB} MiB at peak.`, '',
  ] : [];
  const table = rows.map((r) => `| ${r.scenario} | ${r.summary.runs} | ${r.summary.medianMs} | ${r.summary.minMs} | ${r.summary.maxMs} | ${r.ratioToStatic ?? ''} |`);
  writeFileSync('bench/results/latest.md', [
    `# Benchmarks, ${new Date().toISOString()}`, '',
    `Machine: ${machine.cpus} cores, ${machine.memoryGiB} GiB, Node ${machine.node}. Kubernetes ${versions.kubernetes}, ${versions.etcdImage}.`, '',
    '| scenario | runs | median ms | min ms | max ms | median / static median |', '|---|---|---|---|---|---|', ...table, '', ...backupLines,
  ].join('\n'));
  process.stdout.write(`${table.join('\n')}\n`);
}

await main();
