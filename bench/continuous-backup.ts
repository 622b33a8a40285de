/**
 * Continuous backup at scale: N one-member clusters, each with a continuous EtcdBackup into MinIO on the
 * lab and a steady writer; the RPO every backup reports (the operator's live metric, sampled every 2 s for
 * the whole load), and the operator's memory and CPU while it keeps all N change logs.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../src/api/etcd-cluster.js';
import type { EtcdBackup } from '../src/api/etcd-backup.js';
import type { ApiTransport } from '../src/runtime/transport.js';
import { eventually } from '../test/support/lab.js';
import { spawnOperator } from '../test/support/operator-process.js';
import { startMinio } from '../test/support/minio.js';
import { etcdPut } from '../test/support/etcd-gateway.js';
import { cpuSeconds, rssMiB } from '../test/support/process-usage.js';
import { benchCluster, inNamespace } from './bench-cluster.js';
import { S3Storage } from '../src/storage/s3.js';

export interface ContinuousAtScale {
  clusters: number;
  seconds: number;
  /** Writes acknowledged per second, all clusters together. */
  writesPerSecond: number;
  rpoSamples: number;
  rpoMedianS: number;
  rpoP99S: number;
  rpoMaxS: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  /** Operator CPU seconds per second of load: the share of one core the change logs cost. */
  cpuCores: number;
  chunksStored: number;
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

export async function continuousAtScale(core: CoreV1Api, transport: ApiTransport, count: number, seconds: number, writesPerSecondEach: number): Promise<ContinuousAtScale> {
  return inNamespace(core, async (namespace) => {
    const cleanups: (() => unknown)[] = [];
    try {
      const minio = await startMinio({ after: (fn) => cleanups.push(fn) }, 'bench');
      const secret = Object.fromEntries(Object.entries(minio.awsSecretData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
      await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'aws' }, data: secret } });
      const operator = spawnOperator(namespace);
      cleanups.push(() => operator.stop());
      const clusters = Array.from({ length: count }, (_, i) => benchCluster(core, transport, namespace, `cb-${i}`));
      await Promise.all(clusters.map((c) => c.create({ size: 1 })));
      await Promise.all(clusters.map((c) => c.settle(1, undefined, 600_000)));
      const api = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdbackups`;
      for (let i = 0; i < count; i++) {
        await transport.call('POST', api, {
          apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', metadata: { name: `cb-${i}` },
          spec: {
            clusterName: `cb-${i}`, storageType: 'S3', s3: { path: `bench/cb-${i}.db`, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
            compression: 'Brotli', backupPolicy: { backupIntervalInSecond: 3600 }, continuous: {},
          },
        });
      }
      await eventually(`${count} change logs following`, 300_000, async () => {
        const list = (await transport.call('GET', api)) as { items: EtcdBackup[] };
        const following = list.items.filter((b) => b.status?.conditions?.some((c) => c.type === 'ChangeLog' && c.status === 'True')).length;
        return following === count ? true : undefined;
      });

      const endpoints = await Promise.all(clusters.map((_, i) => core.readNamespacedService({ name: `cb-${i}-client`, namespace })
        .then((s) => `http://${s.spec?.clusterIP ?? ''}:2379`)));
      const rssBeforeMiB = rssMiB(operator.pid);
      let rssPeakMiB = rssBeforeMiB;
      const cpuBefore = cpuSeconds(operator.pid);
      const started = performance.now();
      const until = started + seconds * 1000;
      let acknowledged = 0;
      const writers = endpoints.map(async (endpoint, c) => {
        for (let n = 0; performance.now() < until; n++) {
          const next = started + (n * 1000) / writesPerSecondEach;
          await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
          await etcdPut(endpoint, `load-${c}-${n}`, `value-${n}`, { timeoutMs: 5000 }).then(() => { acknowledged++; }, () => undefined);
        }
      });
      const rpo: number[] = [];
      const sampling = (async () => {
        while (performance.now() < until) {
          await new Promise((r) => setTimeout(r, 2000));
          rssPeakMiB = Math.max(rssPeakMiB, rssMiB(operator.pid));
          const text = await (await fetch(await operator.metricsUrl())).text();
          for (const line of text.split('\n')) if (line.startsWith('etcd_operator_changelog_rpo_seconds{')) rpo.push(Number(line.split(' ').pop()));
        }
      })();
      await Promise.all([...writers, sampling]);
      const elapsedS = (performance.now() - started) / 1000;
      const cpuCores = (cpuSeconds(operator.pid) - cpuBefore) / elapsedS;
      const store = new S3Storage({ bucket: 'bench', endpoint: minio.endpoint, forcePathStyle: true, region: 'us-east-1', accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey });
      const chunksStored = (await store.list('')).filter((n) => n.includes('.changes/')).length;
      store.destroy();
      const sorted = [...rpo].sort((a, b) => a - b);
      return {
        clusters: count, seconds, writesPerSecond: round(acknowledged / elapsedS, 1), rpoSamples: rpo.length,
        rpoMedianS: round(quantile(sorted, 0.5)), rpoP99S: round(quantile(sorted, 0.99)), rpoMaxS: round(sorted.at(-1) ?? 0),
        rssBeforeMiB, rssPeakMiB, cpuCores: round(cpuCores), chunksStored,
      };
    } finally {
      for (const fn of cleanups.reverse()) await fn();
    }
  });
}
