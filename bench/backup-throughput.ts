/**
 * Backup throughput on a large database: the operator streaming a snapshot to S3 (a real MinIO on the lab)
 * against `etcdctl snapshot save` to a local file, from the same member, in one run; and the operator's
 * resident memory before and during, sampled from /proc.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { CoreV1Api } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../src/api/etcd-cluster.js';
import type { EtcdBackup } from '../src/api/etcd-backup.js';
import type { ApiTransport } from '../src/runtime/transport.js';
import { eventually, lab } from '../test/support/lab.js';
import { spawnOperator } from '../test/support/operator-process.js';
import { startMinio } from '../test/support/minio.js';
import { etcdPutMany } from '../test/support/etcd-gateway.js';
import { summarise } from './stats.js';
import { rssMiB } from '../test/support/process-usage.js';
import type { Summary } from './stats.js';

export interface BackupThroughput {
  dbBytes: number;
  etcdctl: Summary;
  /** EtcdBackup to S3: the operator streams the snapshot into MinIO. */
  s3: Summary;
  /** EtcdBackup to a volume: a pod of the operator image streams it into a file on the claim. */
  volume: Summary;
  /** Throughput over etcdctl's (median over median): ≥ 0.9 is the goal. */
  ratioS3: number;
  ratioVolume: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
}

export async function backupThroughput(core: CoreV1Api, transport: ApiTransport, runs: number, targetBytes = 1024 ** 3): Promise<BackupThroughput> {
  const namespace = `bench-${randomBytes(3).toString('hex')}`;
  const cleanups: (() => unknown)[] = [];
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
    const minio = await startMinio({ after: (fn) => cleanups.push(fn) }, 'bench');
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
    const volumeMs: number[] = [];
    const etcdctlMs: number[] = [];
    /** Milliseconds from creating an EtcdBackup to its success. */
    const backup = async (name: string, storage: Record<string, unknown>): Promise<number> => {
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
      return performance.now() - started;
    };
    for (let run = 0; run < runs; run++) {
      const file = `/tmp/bench-snapshot-${run}.db`;
      const started = performance.now();
      execFileSync(etcdctl, ['--endpoints', endpoint, 'snapshot', 'save', file], { stdio: 'ignore', timeout: 600_000 });
      etcdctlMs.push(performance.now() - started);
      rmSync(file, { force: true });

      const sampler = setInterval(() => { rssPeakMiB = Math.max(rssPeakMiB, rssMiB(operator.pid)); }, 100);
      s3Ms.push(await backup(`s3-${run}`, { storageType: 'S3', s3: { path: `bench/run-${run}.db`, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true } }));
      clearInterval(sampler);
      volumeMs.push(await backup(`volume-${run}`, { storageType: 'Volume', volume: { claimName: 'backups', path: `run-${run}.db` } }));
      process.stderr.write(`${JSON.stringify({ scenario: 'backup-1GiB', run: run + 1, etcdctlMs: Math.round(etcdctlMs.at(-1) ?? 0), s3Ms: Math.round(s3Ms.at(-1) ?? 0), volumeMs: Math.round(volumeMs.at(-1) ?? 0), rssPeakMiB })}\n`);
    }
    const [etcdctlSummary, s3Summary, volumeSummary] = [etcdctlMs, s3Ms, volumeMs].map(summarise) as [Summary, Summary, Summary];
    const ratio = (x: Summary): number => Math.round((etcdctlSummary.medianMs / x.medianMs) * 100) / 100;
    return {
      dbBytes, etcdctl: etcdctlSummary, s3: s3Summary, volume: volumeSummary, rssBeforeMiB, rssPeakMiB, ratioS3: ratio(s3Summary), ratioVolume: ratio(volumeSummary),
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn();
    await core.deleteNamespace({ name: namespace, body: { gracePeriodSeconds: 0 } });
  }
}
