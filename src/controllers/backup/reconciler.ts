import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ApiTransport } from '../../runtime/transport.js';
import type { Reconcile, ReconcileResult } from '../../runtime/controller.js';
import type { Store } from '../../runtime/store.js';
import type { EventRecorder } from '../../runtime/events.js';
import { writeStatus } from '../../runtime/status.js';
import { rfc3339 } from '../../runtime/time.js';
import { GROUP, VERSION } from '../../api/etcd-cluster.js';
import type { EtcdCluster } from '../../api/etcd-cluster.js';
import type { BackupStatus, EtcdBackup } from '../../api/etcd-backup.js';
import type { EtcdStatus } from '../../etcd/client.js';
import { expired, periodicBackups, periodicName } from '../../storage/naming.js';
import type { StoredObject } from '../../storage/storage.js';
import { ConfigurationError } from '../cluster/tls.js';
import type { EtcdClients } from '../cluster/tls.js';
import { snapshotSource } from './source.js';
import { openStorage } from './storage-for.js';

export interface BackupReconcilerDeps {
  transport: ApiTransport;
  events: EventRecorder;
  backups: Store<EtcdBackup>;
  clusters: Store<EtcdCluster>;
  pods: Store<V1Pod>;
  etcdClients: EtcdClients;
  clusterDomain: string;
}

const DEFAULT_TIMEOUT_S = 3600;
const RETRY_MS = 30_000;
const PROGRESS_BYTES = 64 * 1024 * 1024;

interface Taken {
  object: StoredObject;
  member: EtcdStatus;
  kept?: number;
}

/**
 * reconcile(namespace/name) for EtcdBackup: a one-shot backup runs once per spec generation; a periodic one
 * runs every backupIntervalInSecond and keeps the newest maxBackups. A failure is reported and retried.
 */
export function backupReconciler(d: BackupReconcilerDeps): Reconcile {
  return async (key, { log }): Promise<ReconcileResult | undefined> => {
    const [namespace = '', name = ''] = key.split('/');
    const backup = d.backups.get(namespace, name);
    if (!backup?.metadata.uid || backup.metadata.deletionTimestamp) return undefined;
    const intervalMs = (backup.spec.backupPolicy?.backupIntervalInSecond ?? 0) * 1000;
    const due = nextDue(backup, intervalMs, Date.now());
    if (due !== 0) return due === undefined ? undefined : { requeueAfterMs: due };

    const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdbackups/${name}`;
    const involved = { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', name, namespace, uid: backup.metadata.uid };
    const generation = backup.metadata.generation;
    try {
      const taken = await take(d, backup, intervalMs, log);
      const message = `${taken.object.name}: revision ${taken.member.revision}, ${taken.object.size} bytes, sha256 ${taken.object.sha256}`;
      await writeStatus<BackupStatus, EtcdBackup>(d.transport, path, backup, () => ({
        succeeded: true, etcdVersion: taken.member.version, etcdRevision: taken.member.revision, lastSuccessDate: rfc3339(Date.now()),
        lastBackup: { path: taken.object.name, size: taken.object.size, sha256: taken.object.sha256 },
        ...(taken.kept === undefined ? {} : { backups: taken.kept }), observedGeneration: generation,
        conditions: [{ type: 'Succeeded', status: 'True', reason: 'BackupTaken', message, lastTransitionTime: rfc3339(Date.now()), observedGeneration: generation }],
      }));
      await d.events.record(involved, 'Normal', 'BackupTaken', message);
      log.info({ object: taken.object, revision: taken.member.revision }, 'backup taken');
      return intervalMs > 0 ? { requeueAfterMs: intervalMs } : undefined;
    } catch (err) {
      const reason = err instanceof ConfigurationError ? err.reason : 'BackupFailed';
      const message = (err as Error).message;
      await writeStatus<BackupStatus, EtcdBackup>(d.transport, path, backup, (current) => ({
        ...current.status, succeeded: false, reason: message, observedGeneration: generation,
        conditions: [{ type: 'Succeeded', status: 'False', reason, message, lastTransitionTime: rfc3339(Date.now()), observedGeneration: generation }],
      }));
      await d.events.record(involved, 'Warning', reason, message);
      log.warn({ err }, 'backup failed');
      return { requeueAfterMs: intervalMs > 0 ? Math.min(intervalMs, RETRY_MS) : RETRY_MS };
    }
  };
}

/** 0 when a backup is due now; else how long until it is, or undefined when none is (a one-shot done). */
function nextDue(backup: EtcdBackup, intervalMs: number, now: number): number | undefined {
  const s = backup.status;
  if (!s?.succeeded || s.observedGeneration !== backup.metadata.generation) return 0;
  if (intervalMs === 0) return undefined;
  const since = now - Date.parse(s.lastSuccessDate ?? '');
  return Number.isFinite(since) && since < intervalMs ? intervalMs - since : 0;
}

async function take(d: BackupReconcilerDeps, backup: EtcdBackup, intervalMs: number, log: Logger): Promise<Taken> {
  const { namespace } = backup.metadata;
  const spec = backup.spec;
  const source = await snapshotSource(spec, namespace, d.clusters, d.pods, d.etcdClients, d.clusterDomain);
  const opened = await openStorage(d.transport, namespace, spec.storageType, spec.s3, spec.volume);
  try {
    const member = await firstAnswer(source.endpoints, (e) => source.etcd.status(e));
    const objectName = intervalMs > 0 ? periodicName(opened.name, member.value.revision, new Date()) : opened.name;
    const timeoutMs = (spec.backupPolicy?.timeoutInSecond ?? DEFAULT_TIMEOUT_S) * 1000;
    log.info({ from: member.endpoint, to: objectName, revision: member.value.revision }, 'backup started');
    const object = await opened.storage.put(objectName, paced(source.etcd.snapshot(member.endpoint), timeoutMs, log));
    if (intervalMs === 0) return { object, member: member.value };
    const keep = spec.backupPolicy?.maxBackups ?? 0;
    for (const old of expired(await opened.storage.list(`${opened.name}_v`), opened.name, keep)) {
      await opened.storage.remove(old);
      log.info({ removed: old }, 'old backup removed (retention)');
    }
    return { object, member: member.value, kept: periodicBackups(await opened.storage.list(`${opened.name}_v`), opened.name).length };
  } finally {
    opened.close();
  }
}

async function firstAnswer<T>(endpoints: string[], ask: (endpoint: string) => Promise<T>): Promise<{ endpoint: string; value: T }> {
  const errors: string[] = [];
  for (const endpoint of endpoints) {
    try {
      return { endpoint, value: await ask(endpoint) };
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  throw new Error(`no etcd endpoint answered: ${errors.join('; ') || 'none given'}`);
}

/** Passes the snapshot through, logging progress and failing it once it runs past its deadline. */
async function* paced(source: AsyncIterable<Buffer>, timeoutMs: number, log: Logger): AsyncIterable<Buffer> {
  const deadline = Date.now() + timeoutMs;
  let bytes = 0;
  let reported = 0;
  for await (const chunk of source) {
    if (Date.now() > deadline) throw new Error(`snapshot still running after ${timeoutMs / 1000} s (backupPolicy.timeoutInSecond)`);
    bytes += chunk.length;
    if (bytes - reported >= PROGRESS_BYTES) {
      reported = bytes;
      log.info({ bytes }, 'backup in progress');
    }
    yield chunk;
  }
}
