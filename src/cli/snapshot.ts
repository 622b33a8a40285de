/** `etcd-operator snapshot fetch`: the step of a restore that brings a verified snapshot into a member's volume. */
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { parseTiers } from '../storage/retention.js';
import type { Retention } from '../storage/retention.js';
import { DirectoryStorage } from '../storage/directory.js';
import { s3Storage } from '../storage/locate.js';
import { writeInBlocks } from '../storage/file-blocks.js';
import type { BackupStorage } from '../storage/storage.js';
import { CODECS } from '../storage/sealed.js';
import { restorableSnapshot } from '../storage/snapshot-read.js';
import type { KeyRing, SealOptions } from '../storage/sealed.js';
import { keyRingFromDir, sealWith } from '../storage/keys.js';
import { EtcdClient } from '../etcd/client.js';
import { SECRET_KEYS } from '../k8s/tls-secrets.js';
import { saveSnapshot } from '../controllers/backup/save.js';
import { createLogger, logProcessWarnings } from '../runtime/log.js';
import { RESTORED_BEFORE, backupRefusal, refusalText } from '../controllers/restore/backup-refusal.js';
import { UsageError } from './usage.js';
import { DATA_LOST_EXIT, SNAPSHOT_REFUSED_EXIT } from '../k8s/member-pod.js';
import { RestoredDataLost, prepareTarget, targetData, tidyRestore } from './restore-target.js';
import type { RestoreTarget } from './restore-target.js';

/** Where the kubelet reads a container's termination message (the pod's default terminationMessagePath). */
const TERMINATION_LOG = '/dev/termination-log';

export const SNAPSHOT_USAGE = `usage: etcd-operator snapshot fetch --to FILE (--s3-path BUCKET/KEY --aws-dir DIR [--s3-endpoint URL] [--force-path-style] | --dir DIR --name PATH) [--key-dir DIR]
                                    [--data-dir DIR --complete FILE --into LINK --scratch DIR]
  Copies a backup to FILE as a plain snapshot, checking it against the sha256 stored beside it and, if it is
  encrypted, every frame against its tag (keys: one file per key id in DIR); nothing is left at FILE if it fails.
  A backup refused for its bytes is remembered at FILE.refused and not fetched again (exit code 4).
  With --data-dir, for a member's restore: LINK is pointed at the data directory for etcdutl to restore into; if
  the member's restore was complete (COMPLETE exists), nothing is fetched, FILE links to its database and LINK to
  the scratch DIR; if its data is gone since, it exits 3.
       etcd-operator snapshot tidy --to FILE --into LINK --scratch DIR [--complete FILE] [--started FILE]
  Once etcdutl has run: writes COMPLETE (and STARTED, the data guard's record), removes FILE, LINK and DIR.
       etcd-operator snapshot save --endpoints URL[,URL…] --dir DIR --name PATH [--periodic --max-backups N --retention EVERY:FOR,…] [--timeout S] [--tls-dir DIR]
                                   [--compression None|Brotli|Gzip] [--key-dir DIR --key-id ID]
  Streams a member's snapshot to DIR/PATH with its sha256 beside it; prints the result (also as the pod's termination message).
  Both write their result, or why they failed, to --termination-log PATH (default ${TERMINATION_LOG}), where the operator reads it.`;

/** One JSON log line of the `snapshot` command, fetch or save alike. */
const say = (msg: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), component: 'snapshot', msg, ...fields })}\n`);
};

export async function snapshotCommand(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv, allowPositionals: true, options: {
      to: { type: 'string' }, 's3-path': { type: 'string' }, 's3-endpoint': { type: 'string' }, 'force-path-style': { type: 'boolean', default: false },
      'aws-dir': { type: 'string' }, dir: { type: 'string' }, name: { type: 'string' },
      endpoints: { type: 'string' }, periodic: { type: 'boolean', default: false }, 'max-backups': { type: 'string', default: '0' }, retention: { type: 'string', default: '' },
      timeout: { type: 'string', default: '3600' }, 'tls-dir': { type: 'string' },
      compression: { type: 'string', default: 'None' }, 'key-dir': { type: 'string' }, 'key-id': { type: 'string' },
      'termination-log': { type: 'string', default: TERMINATION_LOG },
      'data-dir': { type: 'string' }, into: { type: 'string' }, scratch: { type: 'string' }, complete: { type: 'string' }, started: { type: 'string' },
    },
  });
  const steps = values.to && values.into && values.scratch ? { snapshot: values.to, into: values.into, scratch: values.scratch } : undefined;
  if (positionals[0] === 'tidy' && steps) {
    tidyRestore({ ...steps, ...(values.complete ? { complete: values.complete } : {}), ...(values.started ? { started: values.started } : {}) });
    say('restore steps tidied', { removed: [steps.snapshot, steps.into, steps.scratch] });
    return 0;
  }
  if (values['data-dir'] && !(steps && values.complete)) throw new UsageError('--data-dir needs --into, --scratch and --complete');
  const target: RestoreTarget | undefined = steps && values['data-dir'] && values.complete ? { ...steps, dataDir: values['data-dir'], complete: values.complete } : undefined;
  // Before anything is read: the data a past run of these steps restored is never fetched or restored over.
  if (positionals[0] === 'fetch' && target) {
    try {
      if (prepareTarget(target) === 'restored') {
        say('the member\'s data is in place already: nothing fetched; etcdutl restores into the scratch, which is then removed', { dataDir: target.dataDir });
        // For the restore: what etcdutl does next reads no snapshot, and is no judge of the backup.
        await writeFile(values['termination-log'], RESTORED_BEFORE).catch(() => undefined);
        return 0;
      }
    } catch (err) {
      if (!(err instanceof RestoredDataLost)) throw err;
      say(err.message);
      await writeFile(values['termination-log'], err.message).catch(() => undefined);
      return DATA_LOST_EXIT;
    }
  }
  // A refusal is kept beside the snapshot's place: the kubelet runs a failed step again (the pod restarts it), and
  // the same bytes would be fetched, a gigabyte perhaps, only to be refused again. Said again before anything
  // else is read (keys, credentials), so the step ends the same way each time.
  const refusedMark = values.to ? `${values.to}.refused` : '';
  const source = values['s3-path'] ?? `${values.dir ?? ''}/${values.name ?? ''}`;
  const earlier = positionals[0] === 'fetch' && refusedMark ? await earlierRefusal(refusedMark, source) : undefined;
  if (earlier) {
    say('snapshot refused before; not fetched again', { source, refusal: earlier });
    await writeFile(values['termination-log'], earlier).catch(() => undefined);
    return SNAPSHOT_REFUSED_EXIT;
  }
  const codec = CODECS.find((c) => c === values.compression);
  if (!codec) {
    process.stderr.write(`--compression ${values.compression}: one of ${CODECS.join(', ')}\n`);
    return 2;
  }
  let keys: KeyRing | undefined;
  let sealing: SealOptions;
  try {
    keys = values['key-dir'] ? await keyRingFromDir(values['key-dir']) : undefined;
    sealing = sealWith(codec, keys, values['key-id']);
  } catch (err) {
    // The operator checks the keys before it starts this pod; a Secret changed since lands here.
    say('backup keys not usable', { error: (err as Error).message });
    await writeFile(values['termination-log'], (err as Error).message).catch(() => undefined);
    return 1;
  }
  if (positionals[0] === 'save' && values.endpoints && values.dir && values.name) {
    return save({ endpoints: values.endpoints.split(','), dir: values.dir, name: values.name, periodic: values.periodic, sealing,
      retention: { maxBackups: Number(values['max-backups']), tiers: parseTiers(values.retention) }, timeoutMs: Number(values.timeout) * 1000, terminationLog: values['termination-log'], ...(values['tls-dir'] ? { tlsDir: values['tls-dir'] } : {}) });
  }
  if (positionals[0] !== 'fetch' || !values.to || !(values['s3-path'] ? values['aws-dir'] : values.dir && values.name)) {
    process.stderr.write(`${SNAPSHOT_USAGE}\n`);
    return 2;
  }
  let storage: BackupStorage;
  let name: string;
  if (values['s3-path']) {
    const dir = values['aws-dir'] ?? '';
    const located = s3Storage({ path: values['s3-path'], ...(values['s3-endpoint'] ? { endpoint: values['s3-endpoint'] } : {}), forcePathStyle: values['force-path-style'] },
      await readFile(`${dir}/credentials`, 'utf8'), await readFile(`${dir}/config`, 'utf8').catch(() => ''));
    ({ storage, name } = located);
  } else {
    storage = new DirectoryStorage(values.dir ?? '');
    name = values.name ?? '';
  }
  const partial = `${values.to}.partial`;
  const started = Date.now();
  try {
    const file = await open(partial, 'w');
    try {
      await writeInBlocks(file, restorableSnapshot(name, await storage.openUnchecked(name), keys ?? new Map()));
    } finally {
      await file.close();
    }
    await rename(partial, values.to);
    if (target) targetData(target);
    say('snapshot fetched and verified', { name, to: values.to, ms: Date.now() - started });
    return 0;
  } catch (err) {
    await rm(partial, { force: true });
    const message = (err as Error).message;
    say('snapshot not fetched', { name, error: message });
    const refusal = backupRefusal(err);
    if (!refusal) return 1;
    // The same bytes would be refused the same way on every retry: the operator reads this and ends the restore.
    const text = refusalText(refusal);
    await writeFile(refusedMark, JSON.stringify({ source, refusal: text })).catch(() => undefined);
    await writeFile(values['termination-log'], text).catch(() => undefined);
    return SNAPSHOT_REFUSED_EXIT;
  }
}

/** The refusal a mark holds, if it is of this source (a restore's source edited since is fetched anew). */
async function earlierRefusal(mark: string, source: string): Promise<string | undefined> {
  try {
    const kept = JSON.parse(await readFile(mark, 'utf8')) as { source?: unknown; refusal?: unknown };
    return kept.source === source && typeof kept.refusal === 'string' ? kept.refusal : undefined;
  } catch {
    return undefined;
  }
}

interface SaveOptions { endpoints: string[]; dir: string; name: string; periodic: boolean; retention: Retention; sealing: SealOptions; timeoutMs: number; terminationLog: string; tlsDir?: string }

/** The Volume backup, run in a pod with the claim mounted; its result goes where the operator reads it. */
async function save(o: SaveOptions): Promise<number> {
  const k = SECRET_KEYS.operator;
  const tls = o.tlsDir
    ? { cert: await readFile(`${o.tlsDir}/${k.cert}`, 'utf8'), key: await readFile(`${o.tlsDir}/${k.key}`, 'utf8'), ca: await readFile(`${o.tlsDir}/${k.ca}`, 'utf8') }
    : undefined;
  const log = createLogger('info');
  logProcessWarnings(log);
  try {
    const saved = await saveSnapshot({
      etcd: new EtcdClient({ timeoutMs: 10_000, ...(tls ? { tls } : {}) }), endpoints: o.endpoints, storage: new DirectoryStorage(o.dir), base: o.name,
      periodic: o.periodic, retention: o.retention, sealing: o.sealing, timeoutMs: o.timeoutMs, log,
    });
    const result = JSON.stringify(saved);
    process.stdout.write(`${result}\n`);
    await writeFile(o.terminationLog, result).catch(() => undefined);
    return 0;
  } catch (err) {
    const message = (err as Error).message;
    say('snapshot not saved', { error: message });
    await writeFile(o.terminationLog, message).catch(() => undefined);
    return 1;
  }
}
