import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import { ETCD_CONTAINER, FETCH_STEP, SNAPSHOT_REFUSED_EXIT } from '../../src/k8s/member-pod.js';
import { ignoreStatus } from '../../src/runtime/transport.js';
import type { BackupSpec, EtcdBackup, EtcdRestore, RestoreSpec } from '../../src/api/etcd-backup.js';
import { eventually } from './lab.js';
import { etcdPutMany, etcdStatus } from './etcd-gateway.js';
import { isReady, testbed } from './cluster-testbed.js';
import type { Testbed } from './cluster-testbed.js';
import { startMinio } from './minio.js';
import type { Minio } from './minio.js';
import { startOperator } from './operator-process.js';
import type { TestOperator } from './operator-process.js';

/**
 * Where a backup's test starts: its namespace with an operator, a MinIO with the bucket `backups` and its
 * CoreOS `aws` Secret, and a cluster `src` of `size` members (their pods returned) ready to be written to and
 * backed up.
 */
export async function backupBed(t: TestContext, prefix: string, size = 1): Promise<{ bed: Testbed; minio: Minio; operator: TestOperator; members: V1Pod[] }> {
  const bed = await testbed(t, prefix);
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const operator = startOperator(t, bed.namespace);
  await bed.create('src', { size });
  const members = await eventually(`the source: ${size} members ready`, 60_000 * (size + 1), async () => {
    const pods = await bed.pods('src');
    return (await bed.get('src')).status?.phase === 'Running' && pods.length === size && pods.every(isReady) ? pods : undefined;
  });
  return { bed, minio, operator, members };
}

const backups = (bed: Testbed): string => `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdbackups`;

export async function createBackup(bed: Testbed, name: string, spec: BackupSpec): Promise<void> {
  await bed.transport.call('POST', backups(bed), { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', metadata: { name }, spec });
}

export const getBackup = async (bed: Testbed, name: string): Promise<EtcdBackup> => (await bed.transport.call('GET', `${backups(bed)}/${name}`)) as EtcdBackup;

/** Posts the EtcdBackup and returns it once it succeeded (a backup that fails keeps this waiting until `timeoutMs`). */
export async function takeBackup(bed: Testbed, name: string, spec: BackupSpec, timeoutMs = 120_000): Promise<EtcdBackup> {
  await createBackup(bed, name, spec);
  return eventually(`backup ${name} taken`, timeoutMs, async () => {
    const b = await getBackup(bed, name);
    return b.status?.succeeded ? b : undefined;
  });
}

const restores = (bed: Testbed): string => `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdrestores`;

export async function createRestore(bed: Testbed, name: string, spec: RestoreSpec): Promise<void> {
  await bed.transport.call('POST', restores(bed), { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdRestore', metadata: { name }, spec });
}

/** The restore as the API server has it; undefined when there is none. */
export const getRestore = (bed: Testbed, name: string): Promise<EtcdRestore | undefined> =>
  bed.transport.call('GET', `${restores(bed)}/${name}`).then((r) => r as EtcdRestore, (err: unknown) => { ignoreStatus(404)(err); return undefined; });

/** The restore once it has ended, Completed or Failed (its status says which and why); undefined while it runs. */
export async function restoreEnded(bed: Testbed, name: string): Promise<EtcdRestore | undefined> {
  const r = await getRestore(bed, name);
  if (!r) throw new Error(`EtcdRestore ${name} not found`);
  return hasEnded(r) ? r : undefined;
}

/** Completed or Failed: a restore in either phase does nothing more. */
const hasEnded = (r: EtcdRestore): boolean => r.status?.phase === 'Completed' || r.status?.phase === 'Failed';

/** How long a restore that moves on (a new phase, reason or replayed revision) may take at most in all. */
const RESTORE_MOVING_MS = 900_000;

/**
 * Posts the EtcdRestore and returns it once it has ended (the caller asserts how). It fails once `stallMs` pass
 * with its status standing still: the time a restore takes grows with the revisions it replays and the machine's
 * load (three replays at once on a busy CI machine took over four minutes), but one that stops moving waits for ever.
 */
export async function restoreToEnd(bed: Testbed, name: string, spec: RestoreSpec, stallMs = 180_000): Promise<EtcdRestore> {
  await createRestore(bed, name, spec);
  const started = Date.now();
  let seen = '';
  let movedAt = started;
  for (;;) {
    const restore = await getRestore(bed, name);
    const { phase, reason, pointInTime } = restore?.status ?? {};
    if (restore && hasEnded(restore)) return restore;
    const now = JSON.stringify([phase, reason, pointInTime?.replayedThrough]);
    if (now !== seen) [seen, movedAt] = [now, Date.now()];
    const waited = Date.now() - started;
    if (Date.now() - movedAt > stallMs || waited > RESTORE_MOVING_MS) {
      assert.fail(`restore ${name} stood still for ${Date.now() - movedAt} ms, ${waited} ms after it was posted: ${JSON.stringify(restore?.status)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The backup when its change log is Following and holds every revision through `revision`; else undefined. */
export async function changeLogThrough(bed: Testbed, name: string, revision: number): Promise<EtcdBackup | undefined> {
  const b = await getBackup(bed, name);
  const log = b.status?.conditions?.find((c) => c.type === 'ChangeLog');
  return log?.status === 'True' && (b.status?.changeLog?.throughRevision ?? 0) >= revision ? b : undefined;
}

/**
 * Waits, writing a key a second to `endpoint`, until backup `name`'s change log holds the revision `endpoint` stands
 * at now: fixed when the wait begins, since one read at each probe moves on with the writes, ahead of a log 2 s a
 * chunk behind (store-hang failed so in a full run).
 */
export async function untilLogFollows(bed: Testbed, endpoint: string, name: string): Promise<EtcdBackup> {
  const target = (await etcdStatus(endpoint)).revision;
  return writingUntil(endpoint, 'the change log following', 90_000, () => changeLogThrough(bed, name, target));
}

/** Writes a key a second to `endpoint` while `probe` is awaited (as `eventually`): a change log has revisions to store all along. */
export async function writingUntil<T>(endpoint: string, what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  let i = 0;
  return eventually(what, timeoutMs, async () => {
    await etcdPutMany(endpoint, [[`k-${i++}`, `${Date.now()}`]], { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 1000));
    return probe();
  });
}

/** A pod's client URL by its address, as a client outside the cluster's DNS reaches it. */
export const podUrl = (pod: V1Pod): string => `http://${pod.status?.podIP ?? ''}:2379`;

/**
 * backupBed with three members and a continuous EtcdBackup `live` (2 s chunks) following them; answers the member
 * its change log watches, as the operator said when it started following, and the others.
 */
export async function followedBed(t: TestContext, prefix: string): Promise<Awaited<ReturnType<typeof backupBed>> & { watched: V1Pod; others: V1Pod[] }> {
  const started = await backupBed(t, prefix, 3);
  const { bed, minio, operator, members } = started;
  await createBackup(bed, 'live', {
    clusterName: 'src', storageType: 'S3', s3: { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
    backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 },
  });
  const [first] = members;
  if (!first) throw new Error('no member');
  await untilLogFollows(bed, podUrl(first), 'live');
  const lines = operator.logs.flatMap((l) => { try { return [JSON.parse(l) as { msg?: string; endpoint?: string }]; } catch { return []; } });
  const endpoint = lines.filter((l) => l.msg === 'change log following').at(-1)?.endpoint ?? '';
  const watched = members.find((p) => endpoint.includes(p.metadata?.name ?? '-') || endpoint.includes(p.status?.podIP ?? '-'));
  if (!watched) throw new Error(`the watched member (${endpoint}) is none of ${members.map((p) => p.metadata?.name).join(', ')}`);
  return { ...started, watched, others: members.filter((p) => p !== watched) };
}

/**
 * The cluster a refused restore made never served: its members' fetch steps refused the backup, and no pod's etcd
 * container ever started (so nothing was read from, or written to, the refused bytes).
 */
export async function neverServed(bed: Testbed, name: string): Promise<void> {
  const pods = await bed.pods(name);
  assert.ok(pods.length > 0, `${name} has its members' pods`);
  for (const pod of pods) {
    const fetch = pod.status?.initContainerStatuses?.find((c) => c.name === FETCH_STEP);
    const ended = [fetch?.state?.terminated, fetch?.lastState?.terminated].find((x) => x !== undefined);
    assert.ok(!ended || ended.exitCode === SNAPSHOT_REFUSED_EXIT, `${pod.metadata?.name ?? ''}: its fetch step ${JSON.stringify(fetch)}`);
    const etcd = pod.status?.containerStatuses?.find((c) => c.name === ETCD_CONTAINER);
    const started = Boolean(etcd?.state?.running ?? etcd?.state?.terminated ?? etcd?.lastState?.running ?? etcd?.lastState?.terminated) || (etcd?.restartCount ?? 0) > 0;
    assert.equal(started, false, `${pod.metadata?.name ?? ''}: etcd never started, ${JSON.stringify(etcd)}`);
  }
}
