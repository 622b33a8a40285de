/**
 * `npm run bench`: each scenario several times on the lab, in one run; writes bench/results/latest.json and
 * latest.md with medians, min, max and ratios. Runs per scenario: BENCH_RUNS (default 5). BENCH_SCENARIOS picks
 * some of `bringup,scale,failover,nodeloss,drain,upgrade,many,backup,codecs,continuous,sidebyside` (default all);
 * BENCH_CLUSTERS sizes `many` and `continuous` (default 20); BENCH_CONTINUOUS_SECONDS is how long `continuous`
 * writes (default 120). `sidebyside` runs ours and the official etcd-io operator through the same scenarios
 * (BENCH_SIDE_RUNS runs each, default 3) and writes bench/results/side-by-side.{json,md,svg}.
 */
import { kubeConfigCredentials } from '../src/runtime/credentials.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { CoreV1Api } from '@kubernetes/client-node';
import { adminKubeConfig, eventually, lab } from '../test/support/lab.js';
import { staticCluster } from './static-cluster.js';
import { spawnOperator } from '../test/support/operator-process.js';
import { allCrds } from '../src/api/crds.js';
import { ApiTransport } from '../src/runtime/transport.js';
import { ensureCrd } from '../test/support/test-crd.js';
import { summarise } from './stats.js';
import type { Summary } from './stats.js';
import { backupThroughput } from './backup-throughput.js';
import type { BackupThroughput } from './backup-throughput.js';
import { codecBench } from './compression.js';
import type { CodecBench } from './compression.js';
import { benchCluster, inNamespace } from './bench-cluster.js';
import { failover, rollingUpgrade, scaling } from './lifecycle.js';
import { manyClusters } from './many-clusters.js';
import { drainAll, nodeLoss } from './node-loss.js';
import type { ManyClusters } from './many-clusters.js';
import { continuousAtScale } from './continuous-backup.js';
import type { ContinuousAtScale } from './continuous-backup.js';
import { etcdIo, ours } from './contenders.js';
import { sideBySide, sideBySideTable } from './side-by-side.js';
import { sideBySideSvg } from './plot.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const scenarios = new Set((process.env.BENCH_SCENARIOS ?? 'bringup,scale,failover,nodeloss,drain,upgrade,many,backup,codecs,continuous,sidebyside').split(','));
const clusterCount = Number(process.env.BENCH_CLUSTERS ?? 20);
const core = adminKubeConfig().makeApiClient(CoreV1Api);
const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));

/** Milliseconds from the first create request to every member pod Ready. */
function staticBringUp(members: number, image: string): Promise<number> {
  return inNamespace(core, async (namespace) => {
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
  });
}

/** Milliseconds from creating an EtcdCluster to condition Available with every member ready. */
function operatorBringUp(members: number, version: string): Promise<number> {
  return inNamespace(core, async (namespace) => {
    const c = benchCluster(core, transport, namespace, 'bench');
    const started = performance.now();
    await c.create({ size: members, version });
    await c.settle(members);
    return performance.now() - started;
  });
}

interface Row { scenario: string; summary: Summary; ratio?: { value: number; to: string } }

const ratio = (a: Summary, b: Summary, to: string): Row['ratio'] => ({ value: Math.round((a.medianMs / b.medianMs) * 100) / 100, to });

async function measure(name: string, run: () => Promise<number>): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    samples.push(await run());
    process.stderr.write(`${JSON.stringify({ scenario: name, run: i + 1, ms: Math.round(samples.at(-1) ?? 0) })}\n`);
  }
  return summarise(samples);
}

interface Sections { many?: ManyClusters; backup?: BackupThroughput; codecs?: CodecBench; continuous?: ContinuousAtScale }

function report(rows: Row[], { many, backup, codecs, continuous }: Sections, losses: string[]): string {
  const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const table = rows.map((r) => `| ${r.scenario} | ${r.summary.runs} | ${r.summary.medianMs} | ${r.summary.minMs} | ${r.summary.maxMs} | ${r.ratio ? `${r.ratio.value} (${r.ratio.to})` : ''} |`);
  const manyLines = many ? [
    `## ${many.clusters} three-member clusters created at once (${many.clusters * 3} etcd pods), one run`, '',
    `- All Available after ${(many.allAvailableMs / 1000).toFixed(1)} s.`,
    `- Operator RSS ${many.rssBeforeMiB} MiB before, ${many.rssPeakMiB} MiB at peak; ${many.cpuSeconds} CPU seconds from create to all Available.`,
    `- API requests by the operator: ${many.apiRequestsPerCluster} per cluster during bring-up (its own rest_client_requests_total).`,
    `- While all were idle: ${many.idleRequestsPerMinute.join(', ')} API requests in successive minutes.`, '',
  ] : [];
  const backupLines = backup ? [
    `## Backup of a ${Math.round(backup.dbBytes / 2 ** 20)} MiB database (one member), ${backup.etcdctl.runs} runs`, '',
    '| path | median ms | min ms | max ms | MiB/s (median) |', '|---|---|---|---|---|',
    ...([['etcdctl snapshot save → local file', backup.etcdctl],
      ['EtcdBackup → S3: the stream, snapshot start → object stored (operator\'s measure)', backup.s3Stream],
      ['EtcdBackup → S3: created → succeeded', backup.s3],
      ['EtcdBackup → S3 in a MinIO started with --no-compat (random ETags, no MD5 of each part): the stream', backup.s3LeanStream],
      ['MinIO alone: the same file sent by curl in one PUT, no etcd (the store\'s ceiling here)', backup.minioCeiling],
      ['EtcdBackup → volume: the stream, in the backup pod (its measure)', backup.volumeStream],
      ['EtcdBackup → volume: created → succeeded (pod scheduled, started, done)', backup.volume],
      ['etcdctl snapshot save → the same volume, in a pod (its own log\'s times)', backup.volumeEtcdctl],
      ['etcdutl snapshot restore ← local file', backup.etcdutl],
      ['EtcdRestore ← S3: checked, fetched by the member, etcdutl, serving (created → Completed)', backup.restore]] as const)
      .map(([name, x]) => `| ${name} | ${x.medianMs} | ${x.minMs} | ${x.maxMs} | ${Math.round(backup.dbBytes / 2 ** 20 / (x.medianMs / 1000))} |`),
    '', `Stream throughput / etcdctl's: volume ${backup.ratioVolume} (/ etcdctl's into the same volume: ${backup.ratioVolumeSameDisk}), S3 ${backup.ratioS3} (S3 / MinIO's own ceiling: ${backup.ratioS3Ceiling}; into the MinIO without MD5s: ${backup.ratioS3Lean}). A whole restore / etcdutl's alone: ${backup.ratioRestore}. Operator RSS during the S3 backups: ${backup.rssBeforeMiB} MiB before, ${backup.rssPeakMiB} MiB at peak.`,
    `CPU seconds (medians) during an S3 backup: the operator ${backup.cpu.operatorS3}, MinIO ${backup.cpu.minioS3}; into the MinIO without MD5s: the operator ${backup.cpu.operatorS3Lean}, MinIO ${backup.cpu.minioS3Lean}; MinIO taking curl's PUT: ${backup.cpu.minioCeiling}. Two cores are shared by etcd, MinIO and the operator.`, '',
  ] : [];
  const codecLines = codecs ? [
    `## Backup codecs on a ${(codecs.snapshotBytes / 2 ** 20).toFixed(1)} MiB snapshot of the lab's Kubernetes etcd, medians of ${runs} runs`, '',
    '| codec | encrypted | ratio | seal MiB/s | open MiB/s |', '|---|---|---|---|---|',
    ...codecs.rows.map((c) => `| ${c.codec} | ${c.encrypted ? 'AES-256-GCM' : 'no'} | ${c.ratio} | ${c.sealMiBs} | ${c.openMiBs} |`), '',
  ] : [];
  const continuousLines = continuous ? [
    `## Continuous backup of ${continuous.clusters} one-member clusters on one operator, ${continuous.seconds} s of writes, one run`, '',
    `- ${continuous.writesPerSecond} writes/s acknowledged in all; ${continuous.chunksStored} change log chunks stored (Brotli).`,
    `- RPO (etcd_operator_changelog_rpo_seconds, every backup every 2 s, ${continuous.rpoSamples} samples): median ${continuous.rpoMedianS} s, p99 ${continuous.rpoP99S} s, max ${continuous.rpoMaxS} s.`,
    `- Operator RSS ${continuous.rssBeforeMiB} MiB before the load, ${continuous.rssPeakMiB} MiB at peak; ${continuous.cpuCores} of a core while it kept all ${continuous.clusters} logs.`, '',
  ] : [];
  return [
    `# Benchmarks, ${new Date().toISOString()}`, '',
    `Machine: ${machine}. Kubernetes ${lab().kubernetesVersion}, etcd images ${lab().etcdImages.join(', ')}. Medians of ${runs} runs unless said.`, '',
    '| scenario | runs | median ms | min ms | max ms | ratio of medians |', '|---|---|---|---|---|---|', ...table, '',
    ...(losses.length > 0 ? [losses.join(' '), ''] : []), ...manyLines, ...backupLines, ...codecLines, ...continuousLines,
  ].join('\n');
}

/** Ours and etcd-io's side by side (issue 36), into bench/results/side-by-side.*, with the machine and versions. */
async function writeSideBySide(image: string, version: string): Promise<void> {
  const rows = await sideBySide(core, [() => Promise.resolve(ours(transport, version)), () => etcdIo(core, transport, image)], Number(process.env.BENCH_SIDE_RUNS ?? 3));
  const date = new Date().toISOString();
  const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const about = `${date}. Machine: ${machine}. Kubernetes ${lab().kubernetesVersion}, etcd ${image}; etcd-io/etcd-operator at 77c7f10 (shared/peers), built here.`;
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/side-by-side.json', `${JSON.stringify({ date, machine, kubernetes: lab().kubernetesVersion, etcd: image, rows }, null, 2)}\n`);
  writeFileSync('bench/results/side-by-side.md', `# Ours and etcd-io/etcd-operator side by side\n\n${about}\n\n${sideBySideTable(rows)}\n`);
  writeFileSync('bench/results/side-by-side.svg', sideBySideSvg(rows, `ours vs etcd-io/etcd-operator, ${date.slice(0, 10)}`));
  process.stdout.write(`${sideBySideTable(rows)}\n`);
}

async function main(): Promise<void> {
  const [image, nextImage] = lab().etcdImages;
  if (!image || !nextImage) throw new Error('the lab lists fewer than two etcd images');
  const version = image.split(':v')[1] ?? '';
  const nextVersion = nextImage.split(':v')[1] ?? '';
  const rows: Row[] = [];
  const staticMedian = new Map<number, Summary>();
  const sizes = [3, 5, 7];
  for (const members of scenarios.has('bringup') ? [1, ...sizes] : []) {
    const summary = await measure(`static-${members}`, () => staticBringUp(members, image));
    staticMedian.set(members, summary);
    rows.push({ scenario: `static baseline: ${members} member(s) created → all Ready`, summary });
  }
  for (const crd of allCrds()) await ensureCrd(transport, crd);
  const operator = spawnOperator();
  let many: ManyClusters | undefined;
  const losses: string[] = [];
  try {
    for (const members of scenarios.has('bringup') ? sizes : []) {
      const summary = await measure(`operator-${members}`, () => operatorBringUp(members, version));
      const baseline = staticMedian.get(members);
      rows.push({ scenario: `operator: ${members}-member EtcdCluster created → Available, all ready`, summary, ...(baseline ? { ratio: ratio(summary, baseline, 'static') } : {}) });
    }
    let join: Summary | undefined;
    if (scenarios.has('scale')) {
      const s = await scaling(core, transport, runs, version);
      join = summarise(s.join3to4);
      rows.push({ scenario: 'scale 3 → 5: spec changed → 5 ready', summary: summarise(s.up3to5) },
        { scenario: 'scale 5 → 3: spec changed → 3 ready', summary: summarise(s.down5to3) },
        { scenario: 'scale 3 → 4: one fresh member joins', summary: join });
    }
    if (scenarios.has('failover')) {
      const f = await failover(core, transport, operator, runs, version);
      const recovery = summarise(f.recovery);
      rows.push({ scenario: 'failover: follower pod deleted → operator first acts (detection)', summary: summarise(f.detection) },
        { scenario: 'failover: follower pod deleted → back at 3, all ready (MTTR)', summary: recovery, ...(join ? { ratio: ratio(recovery, join, 'a fresh join, 3 → 4') } : {}) });
    }
    if (scenarios.has('nodeloss')) {
      const n = await nodeLoss(core, transport, runs, version);
      rows.push({ scenario: 'node kill (the leader\'s, no volumes) → back at 3, all ready (MTTR)', summary: summarise(n.total) },
        { scenario: 'node kill: node seen NotReady → back at 3 (the operator\'s share, 30 s threshold included)', summary: summarise(n.afterNotReady) });
      losses.push(`Node kills: ${n.lost} acknowledged writes lost.`);
    }
    if (scenarios.has('drain')) {
      const d = await drainAll(core, transport, Math.min(runs, 3), version);
      rows.push({ scenario: 'drain all 3 nodes in turn (3 members on volumes): total', summary: summarise(d.total) },
        { scenario: 'drain all 3 nodes: longest gap between acknowledged writes', summary: summarise(d.longestGap) });
      losses.push(`Drains: ${d.lost} acknowledged writes lost.`);
    }
    if (scenarios.has('upgrade')) {
      const u = await rollingUpgrade(core, transport, Math.min(runs, 3), version, nextVersion);
      rows.push({ scenario: `rolling upgrade ${version} → ${nextVersion}, 3 members without volumes: total`, summary: summarise(u.total) },
        { scenario: 'rolling upgrade: longest gap between acknowledged writes of a continuous client', summary: summarise(u.longestGap) });
      losses.push(`Rolling upgrades: ${u.acknowledged} writes acknowledged during the rolls, ${u.lost} lost.`);
    }
    if (scenarios.has('many')) many = await manyClusters(core, transport, operator, clusterCount, version, 2);
  } finally {
    await operator.stop();
  }
  // Alone on the lab: after ours above has stopped, before the backups below load it.
  // A failure there (a cluster that never served) loses its results, not the rest of the run's.
  if (scenarios.has('sidebyside')) {
    await writeSideBySide(image, version).catch((err: unknown) => { process.stderr.write(`${JSON.stringify({ scenario: 'side-by-side', failed: String(err) })}\n`); });
  }
  let backup: BackupThroughput | undefined;
  let continuous: ContinuousAtScale | undefined;
  const codecs = scenarios.has('codecs') ? await codecBench(runs) : undefined;
  try {
    if (scenarios.has('backup')) backup = await backupThroughput(core, transport, runs);
    if (scenarios.has('continuous')) continuous = await continuousAtScale(core, transport, clusterCount, Number(process.env.BENCH_CONTINUOUS_SECONDS ?? 120), 10);
  } finally {
    transport.agent.destroy();
  }
  // A run of the side-by-side scenario alone leaves the last full run's results as they are.
  if (rows.length === 0 && !many && !backup && !codecs && !continuous) return;
  const machine = { cpus: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  const versions = { kubernetes: lab().kubernetesVersion, etcdImages: lab().etcdImages };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', `${JSON.stringify({ date: new Date().toISOString(), machine, versions, rows, many, backup, codecs, continuous }, null, 2)}\n`);
  const text = report(rows, { many, backup, codecs, continuous }, losses);
  writeFileSync('bench/results/latest.md', text);
  process.stdout.write(`${text}\n`);
}

await main();
