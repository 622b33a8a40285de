/**
 * Backup throughput on a large database: the operator streaming a snapshot to S3 (a real MinIO on the lab)
 * against `etcdctl snapshot save` to a local file, from the same member, in one run; and the operator's
 * resident memory before and during, sampled from /proc.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { CoreV1Api } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../src/api/etcd-cluster.js';
import type { EtcdBackup, EtcdRestore } from '../src/api/etcd-backup.js';
import type { ApiTransport } from '../src/runtime/transport.js';
import { clusterLabels, labelSelector } from '../src/k8s/labels.js';
import { FETCH_STEP } from '../src/k8s/member-pod.js';
import { eventually, lab } from '../test/support/lab.js';
import { spawnOperator } from '../test/support/operator-process.js';
import { startMinio } from '../test/support/minio.js';
import type { Minio } from '../test/support/minio.js';
import { etcdPutMany } from '../test/support/etcd-gateway.js';
import { ETCD_BIN, finishedPod, podLog, volumeDir } from '../test/support/lab-pods.js';
import { medianOf, summarise } from './stats.js';
import { cpuSeconds, rssMiB } from '../test/support/process-usage.js';
import type { Summary } from './stats.js';

export interface BackupThroughput {
  dbBytes: number;
  etcdctl: Summary;
  /** EtcdBackup to S3, created → succeeded: the operator streams the snapshot into MinIO. */
  s3: Summary;
  /** The same backups' stream alone, as the operator measured it (snapshot start → object stored). */
  s3Stream: Summary;
  /**
   * The same bytes from a local file into MinIO by curl in one PUT, no etcd and next to no client CPU in the
   * path: how fast the store on this machine takes them when it has the cores to itself.
   */
  minioCeiling: Summary;
  /**
   * The same backups into a second MinIO started with `--no-compat`, MinIO's own switch for performance tests:
   * each part's ETag is a random id instead of its MD5, the largest piece of the store's own CPU here. An S3
   * service does that work on its own machines; on this lab it takes the cores etcd and the operator need.
   */
  s3LeanStream: Summary;
  /** CPU seconds (medians) over an S3 backup, created to succeeded: the operator's and MinIO's (strict, then lean); MinIO's over curl's PUT. */
  cpu: { operatorS3: number; minioS3: number; operatorS3Lean: number; minioS3Lean: number; minioCeiling: number };
  /** EtcdBackup to a volume, created → succeeded: a pod of the operator image streams it into a file on the claim. */
  volume: Summary;
  volumeStream: Summary;
  /**
   * etcdctl snapshot save into the same claim, in a pod of the etcd image (from its first log line to its
   * "saved"): the like-for-like measure for a Volume backup, whose destination is a lab volume (a loop-mounted
   * node disk), not the host's disk that etcdctl's local file is on.
   */
  volumeEtcdctl: Summary;
  /** Stream throughput over etcdctl's (median over median): ≥ 0.9 is the goal. */
  ratioS3: number;
  /** The stream into the lean MinIO over etcdctl's. */
  ratioS3Lean: number;
  ratioVolume: number;
  /** The Volume stream over etcdctl's into the same claim. */
  ratioVolumeSameDisk: number;
  /** The S3 stream over MinIO's own ceiling. */
  ratioS3Ceiling: number;
  /** `etcdutl snapshot restore` of a local copy of the snapshot into a data directory. */
  etcdutl: Summary;
  /** An EtcdRestore of the S3 backup: created → Completed (checked, fetched, restored, a member serving it). */
  restore: Summary;
  /** etcdutl's time over the whole restore's (median over median). */
  ratioRestore: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
}

/**
 * Where a restore's time went, in seconds from the EtcdRestore's creation (the pods' times are whole seconds): each
 * member pod made, each of its steps started and ended, etcd started, the pod Ready; and the fetch step's own
 * measure of the fetch.
 */
async function restoreTimeline(core: CoreV1Api, namespace: string, cluster: string, createdMs: number): Promise<Record<string, unknown>[]> {
  const at = (time: Date | string | undefined): number | undefined => (time === undefined ? undefined : Math.round((new Date(time).getTime() - createdMs) / 100) / 10);
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: labelSelector(clusterLabels(cluster)) })).items;
  return Promise.all(pods.map(async (pod) => {
    const name = pod.metadata?.name ?? '';
    const fetchLog = await core.readNamespacedPodLog({ name, namespace, container: FETCH_STEP }).catch(() => '');
    const fetched = /"msg":"snapshot fetched and verified".*?"ms":(\d+)/.exec(fetchLog)?.[1];
    return {
      pod: name, made: at(pod.metadata?.creationTimestamp),
      steps: (pod.status?.initContainerStatuses ?? []).map((c) => [c.name, at(c.state?.terminated?.startedAt), at(c.state?.terminated?.finishedAt)]),
      etcdStarted: at(pod.status?.containerStatuses?.[0]?.state?.running?.startedAt),
      ready: at(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime),
      ...(fetched ? { fetchMs: Number(fetched) } : {}),
    };
  }));
}

export async function backupThroughput(core: CoreV1Api, transport: ApiTransport, runs: number, targetBytes = 1024 ** 3): Promise<BackupThroughput> {
  const namespace = `bench-${randomBytes(3).toString('hex')}`;
  const cleanups: (() => unknown)[] = [];
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
    const minio = await startMinio({ after: (fn) => cleanups.push(fn) }, 'bench');
    const leanMinio = await startMinio({ after: (fn) => cleanups.push(fn) }, 'bench', ['--no-compat']);
    const secret = Object.fromEntries(Object.entries(minio.awsSecretData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'aws' }, data: secret } });
    // A claim of the lab's default class: deleted with the namespace, its volume with it (reclaim policy Delete).
    await core.createNamespacedPersistentVolumeClaim({ namespace, body: {
      metadata: { name: 'backups' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } },
    } });
    const operator = spawnOperator(namespace);
    cleanups.push(() => operator.stop());
    const api = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}`;
    await transport.call('POST', `${api}/etcdclusters`, { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name: 'big' }, spec: { size: 1, quotaBackendBytes: 4 * 1024 ** 3 } });
    const pod = await eventually('a member Running', 120_000, async () => {
      const c = (await transport.call('GET', `${api}/etcdclusters/big`)) as EtcdCluster;
      const pods = await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=big' });
      return c.status?.phase === 'Running' ? pods.items[0] : undefined;
    });
    const endpoint = `http://${pod.status?.podIP ?? ''}:2379`;
    // Incompressible values: 768 KiB of random bytes as 1 MiB of base64 text, stored as that text.
    const valueBytes = 768 * 1024;
    const count = Math.ceil(targetBytes / ((valueBytes * 4) / 3));
    for (let i = 0; i < count; i += 16) {
      const batch = Array.from({ length: Math.min(16, count - i) }, (_, j): [string, string] => [`big-${i + j}`, randomBytes(valueBytes).toString('base64')]);
      await Promise.all(batch.map((kv) => etcdPutMany(endpoint, [kv], { timeoutMs: 30_000 })));
    }
    const etcdctl = `${process.env.ETCD_OPERATOR_CACHE ?? `${process.env.HOME ?? ''}/.cache/etcd-operator-lab`}/etcd/${lab().etcdImages[0]?.split(':')[1] ?? ''}/etcdctl`;
    const rssBeforeMiB = rssMiB(operator.pid);
    let rssPeakMiB = rssBeforeMiB;
    let dbBytes = 0;
    const s3Ms: number[] = [];
    const s3StreamMs: number[] = [];
    const s3LeanStreamMs: number[] = [];
    const minioMs: number[] = [];
    const volumeMs: number[] = [];
    const volumeStreamMs: number[] = [];
    const volumeEtcdctlMs: number[] = [];
    const cpuOperatorS3: number[] = [];
    const cpuMinioS3: number[] = [];
    const cpuOperatorS3Lean: number[] = [];
    const cpuMinioS3Lean: number[] = [];
    const cpuMinioCeiling: number[] = [];
    /** What `step` took, with the CPU seconds the given processes used meanwhile. */
    const measuredStep = async <T>(pids: number[], step: () => T | Promise<T>): Promise<{ value: T; ms: number; cpu: number[] }> => {
      const before = pids.map(cpuSeconds);
      const started = performance.now();
      const value = await step();
      return { value, ms: performance.now() - started, cpu: pids.map((pid, i) => cpuSeconds(pid) - (before[i] ?? 0)) };
    };
    // Every step starts with nothing left for the disk to write back: one step's dirty pages must not slow the next.
    const settle = (): void => { execFileSync('sync'); };
    const etcdctlMs: number[] = [];
    const etcdutlMs: number[] = [];
    const restoreMs: number[] = [];
    const etcdutl = etcdctl.replace(/etcdctl$/, 'etcdutl');
    /** Milliseconds from creating an EtcdBackup to its success, and of its stream as the operator measured it. */
    const backup = async (name: string, storage: Record<string, unknown>): Promise<{ ms: number; streamMs: number }> => {
      const started = performance.now();
      await transport.call('POST', `${api}/etcdbackups`, {
        apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', metadata: { name }, spec: { clusterName: 'big', ...storage, backupPolicy: { timeoutInSecond: 600 } },
      });
      const done = await eventually('the backup taken', 600_000, async () => {
        const b = (await transport.call('GET', `${api}/etcdbackups/${name}`)) as EtcdBackup;
        if (b.status?.succeeded === false) throw new Error(b.status.reason ?? 'backup failed');
        return b.status?.succeeded ? b : undefined;
      });
      dbBytes = done.status?.lastBackup?.size ?? 0;
      const ms = performance.now() - started;
      const metrics = await (await fetch(await operator.metricsUrl())).text();
      const line = metrics.split('\n').find((l) => l.startsWith('etcd_operator_backup_last_duration_seconds{') && l.includes(`backup="${name}"`));
      return { ms, streamMs: Number(line?.split(' ').pop() ?? NaN) * 1000 };
    };
    /** Milliseconds etcdctl took to save the snapshot into the backups claim, by its own log's timestamps. */
    const etcdctlOnVolume = async (run: number): Promise<number> => {
      const name = `etcdctl-${run}`;
      await core.createNamespacedPod({ namespace, body: { metadata: { name }, spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'etcdctl', image: lab().etcdImages[0] ?? '', command: [`${ETCD_BIN}/etcdctl`, '--endpoints', endpoint, 'snapshot', 'save', `/backups/etcdctl-${run}.db`],
          volumeMounts: [{ name: 'backups', mountPath: '/backups' }] }],
        volumes: [{ name: 'backups', persistentVolumeClaim: { claimName: 'backups' } }],
      } } });
      await finishedPod(core, namespace, name, 600_000);
      const lines = (await podLog(core, namespace, name)).split('\n').flatMap((l) => { try { return [JSON.parse(l) as { msg?: string; ts?: string }]; } catch { return []; } });
      const at = (msg: string): number => Date.parse(lines.find((l) => l.msg === msg)?.ts ?? '');
      const ms = at('saved') - at('created temporary db file');
      if (!Number.isFinite(ms)) throw new Error(`etcdctl's log lacks its start or its end: ${JSON.stringify(lines)}`);
      // Only the measure is wanted: the node disk holds the Volume backups too.
      rmSync(join(await volumeDir(core, namespace, 'backups'), `etcdctl-${run}.db`), { force: true });
      return ms;
    };
    /** Milliseconds from creating an EtcdRestore of an S3 backup to Completed; the restored cluster is deleted after. */
    const restore = async (name: string, path: string): Promise<number> => {
      const started = performance.now();
      await transport.call('POST', `${api}/etcdrestores`, {
        apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdRestore', metadata: { name },
        spec: { etcdCluster: { name }, backupStorageType: 'S3', s3: { path, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true }, clusterSpec: { size: 1, quotaBackendBytes: 4 * 1024 ** 3 } },
      });
      await eventually('the restore Completed', 900_000, async () => {
        const r = (await transport.call('GET', `${api}/etcdrestores/${name}`)) as EtcdRestore;
        if (r.status?.phase === 'Failed') throw new Error(r.status.reason ?? 'restore failed');
        return r.status?.phase === 'Completed' ? true : undefined;
      });
      const ms = performance.now() - started;
      process.stderr.write(`${JSON.stringify({ scenario: 'backup-1GiB', restore: name, ms: Math.round(ms), timeline: await restoreTimeline(core, namespace, name, Date.now() - ms) })}\n`);
      await transport.call('DELETE', `${api}/etcdclusters/${name}`);
      return ms;
    };
    for (let run = 0; run < runs; run++) {
      const file = `/tmp/bench-snapshot-${run}.db`;
      settle();
      const started = performance.now();
      execFileSync(etcdctl, ['--endpoints', endpoint, 'snapshot', 'save', file], { stdio: 'ignore', timeout: 600_000 });
      etcdctlMs.push(performance.now() - started);
      settle();
      // Signed, its payload not (as the operator sends its parts): MinIO does not hash it for the signature.
      const curl = await measuredStep([minio.pid], () => execFileSync('curl', ['-sSf', '--aws-sigv4', 'aws:amz:us-east-1:s3', '--user', `${minio.accessKey}:${minio.secretKey}`,
        '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD', '-T', file, '-o', '/dev/null', `${minio.endpoint}/bench/ceiling-${run}.db`], { timeout: 600_000 }));
      minioMs.push(curl.ms);
      cpuMinioCeiling.push(curl.cpu[0] ?? NaN);
      const restoredDir = `/tmp/bench-restore-${run}`;
      settle();
      const restoreStarted = performance.now();
      execFileSync(etcdutl, ['snapshot', 'restore', file, '--data-dir', restoredDir], { stdio: 'ignore', timeout: 600_000 });
      etcdutlMs.push(performance.now() - restoreStarted);
      rmSync(restoredDir, { recursive: true, force: true });
      rmSync(file, { force: true });

      const sampler = setInterval(() => { rssPeakMiB = Math.max(rssPeakMiB, rssMiB(operator.pid)); }, 100);
      /** An S3 backup into `store`, its stream's time and the CPU the operator and the store used meanwhile. */
      const toStore = async (name: string, store: Minio): Promise<{ ms: number; streamMs: number; cpu: number[] }> => {
        settle();
        const s3 = await measuredStep([operator.pid, store.pid], () => backup(name, { storageType: 'S3', s3: { path: `bench/run-${run}.db`, awsSecret: 'aws', endpoint: store.endpoint, forcePathStyle: true } }));
        return { ...s3.value, cpu: s3.cpu };
      };
      // Taken in turns, first one and then the other, so that neither always follows the same step.
      const lean = run % 2 === 1 ? await toStore(`s3-lean-${run}`, leanMinio) : undefined;
      const toS3 = await toStore(`s3-${run}`, minio);
      const toLean = lean ?? await toStore(`s3-lean-${run}`, leanMinio);
      clearInterval(sampler);
      cpuOperatorS3.push(toS3.cpu[0] ?? NaN);
      cpuMinioS3.push(toS3.cpu[1] ?? NaN);
      s3Ms.push(toS3.ms);
      s3StreamMs.push(toS3.streamMs);
      cpuOperatorS3Lean.push(toLean.cpu[0] ?? NaN);
      cpuMinioS3Lean.push(toLean.cpu[1] ?? NaN);
      s3LeanStreamMs.push(toLean.streamMs);
      settle();
      const toVolume = await backup(`volume-${run}`, { storageType: 'Volume', volume: { claimName: 'backups', path: `run-${run}.db` } });
      volumeMs.push(toVolume.ms);
      volumeStreamMs.push(toVolume.streamMs);
      settle();
      volumeEtcdctlMs.push(await etcdctlOnVolume(run));
      settle();
      restoreMs.push(await restore(`restored-${run}`, `bench/run-${run}.db`));
      process.stderr.write(`${JSON.stringify({ scenario: 'backup-1GiB', run: run + 1, etcdctlMs: Math.round(etcdctlMs.at(-1) ?? 0), s3Ms: Math.round(s3Ms.at(-1) ?? 0), s3StreamMs: Math.round(s3StreamMs.at(-1) ?? 0), s3LeanStreamMs: Math.round(s3LeanStreamMs.at(-1) ?? 0), minioMs: Math.round(minioMs.at(-1) ?? 0), volumeMs: Math.round(volumeMs.at(-1) ?? 0), volumeStreamMs: Math.round(volumeStreamMs.at(-1) ?? 0), volumeEtcdctlMs: Math.round(volumeEtcdctlMs.at(-1) ?? 0), etcdutlMs: Math.round(etcdutlMs.at(-1) ?? 0), restoreMs: Math.round(restoreMs.at(-1) ?? 0), rssPeakMiB })}\n`);
    }
    const [etcdctlS, s3S, s3StreamS, s3LeanStreamS, minioS, volumeS, volumeStreamS, volumeEtcdctlS, etcdutlS, restoreS] = [etcdctlMs, s3Ms, s3StreamMs, s3LeanStreamMs, minioMs, volumeMs, volumeStreamMs, volumeEtcdctlMs, etcdutlMs, restoreMs]
      .map(summarise) as [Summary, Summary, Summary, Summary, Summary, Summary, Summary, Summary, Summary, Summary];
    const ratio = (x: Summary, to = etcdctlS): number => Math.round((to.medianMs / x.medianMs) * 100) / 100;
    return {
      dbBytes, etcdctl: etcdctlS, s3: s3S, s3Stream: s3StreamS, s3LeanStream: s3LeanStreamS, minioCeiling: minioS,
      cpu: {
        operatorS3: medianOf(cpuOperatorS3), minioS3: medianOf(cpuMinioS3), operatorS3Lean: medianOf(cpuOperatorS3Lean), minioS3Lean: medianOf(cpuMinioS3Lean),
        minioCeiling: medianOf(cpuMinioCeiling),
      }, volume: volumeS, volumeStream: volumeStreamS, volumeEtcdctl: volumeEtcdctlS, rssBeforeMiB, rssPeakMiB,
      ratioS3: ratio(s3StreamS), ratioS3Lean: ratio(s3LeanStreamS), ratioVolume: ratio(volumeStreamS), ratioVolumeSameDisk: ratio(volumeStreamS, volumeEtcdctlS), ratioS3Ceiling: ratio(s3StreamS, minioS),
      etcdutl: etcdutlS, restore: restoreS, ratioRestore: ratio(restoreS, etcdutlS),
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn();
    await core.deleteNamespace({ name: namespace, body: { gracePeriodSeconds: 0 } });
  }
}
