/**
 * `etcd-operator data-guard`: the first init container of a member pod on a volume. A member that has started
 * must never start again on an empty data directory: under its old ID it would have forgotten entries it
 * acknowledged, and a committed write could be lost at the next leader change. The guard refuses (exit 3,
 * the reason in its log, which the pod keeps as the termination message) and the operator removes the member
 * and adds a new one instead.
 */
import { accessSync, constants, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hasEtcdData } from './etcd-data.js';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from './usage.js';
import { DATA_LOST_EXIT, DATA_NOT_OURS_EXIT } from '../k8s/member-pod.js';

export const DATA_GUARD_USAGE = `usage: etcd-operator data-guard --data-dir DIR --marker FILE [--leftover FILE] [--expect-data] [--marked-later]
  Exits 3 if DIR holds no etcd data although data is expected: --expect-data (the member has started before)
  or the marker exists (this pod started it before; it lives on the pod's own scratch volume). Exits 5 if DIR
  exists but this user cannot use it. Else writes the marker (unless --marked-later: a restore's last step writes
  it, once the data is there), and removes the --leftover file (an earlier restore's snapshot, which has no use
  once DIR holds the data).`;

/**
 * Why this process's user cannot use the data directory, or undefined when it can (or there is none yet). Each level
 * etcd keeps its data in is asked, and only "does not exist" means absent: a directory another user made private
 * (0700) reads as missing to existsSync, which would judge the data lost.
 */
function notOurs(dataDir: string): string | undefined {
  for (const dir of [dataDir, `${dataDir}/member`, `${dataDir}/member/wal`]) {
    try {
      accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
      readdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return `${dir}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  return undefined;
}

const report = (msg: string): void => { process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), component: 'data-guard', msg })}\n`); };

export function dataGuardCommand(argv: string[]): number {
  const { values } = parseArgs({ args: argv, options: {
    'data-dir': { type: 'string' }, marker: { type: 'string' }, leftover: { type: 'string' }, 'expect-data': { type: 'boolean', default: false },
    'marked-later': { type: 'boolean', default: false },
  } });
  const [dataDir, marker] = [values['data-dir'], values.marker];
  if (!dataDir || !marker) throw new UsageError('--data-dir and --marker are required');
  // Data another user wrote (a member rolled from root onto a non-root pod) on a volume that did not apply the pod's
  // fsGroup cannot be read: told as such, not judged lost, which would replace the member and drop its data.
  const unusable = notOurs(dataDir);
  if (unusable !== undefined) {
    report(`the data directory ${dataDir} is not usable by user ${process.getuid?.() ?? '?'} (${unusable}): the volume did not apply the pod's fsGroup; `
      + 'make the directory the pod user\'s on the volume (chown -R), or set spec.pod.securityContext.runAsUser to the user that owns it');
    return DATA_NOT_OURS_EXIT;
  }
  const expected = values['expect-data'] || existsSync(marker);
  if (expected && !hasEtcdData(dataDir)) {
    report(`the data directory ${dataDir} is empty, but this member has started before: it must not rejoin under its old ID`);
    return DATA_LOST_EXIT;
  }
  // An earlier operator's restore steps left their snapshot beside the data: of no use once the data is there.
  if (values.leftover && hasEtcdData(dataDir)) rmSync(values.leftover, { force: true });
  if (values['marked-later']) return 0;
  mkdirSync(dirname(marker), { recursive: true });
  writeFileSync(marker, `${new Date().toISOString()}\n`);
  return 0;
}
