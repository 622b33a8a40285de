/**
 * `etcd-operator data-guard`: the first init container of a member pod on a volume. A member that has started
 * must never start again on an empty data directory: under its old ID it would have forgotten entries it
 * acknowledged, and a committed write could be lost at the next leader change. The guard refuses (exit 3,
 * the reason in its log, which the pod keeps as the termination message) and the operator removes the member
 * and adds a new one instead.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from './usage.js';
import { DATA_LOST_EXIT } from '../k8s/member-pod.js';

export const DATA_GUARD_USAGE = `usage: etcd-operator data-guard --data-dir DIR --marker FILE [--leftover FILE] [--expect-data]
  Exits 3 if DIR holds no etcd data although data is expected: --expect-data (the member has started before)
  or the marker exists (this pod started it before; it lives on the pod's own scratch volume). Else writes the
  marker, and removes the --leftover file (a restore's snapshot, which has no use once DIR holds the data).`;

/** etcd writes its write-ahead log under member/wal the moment it first starts. */
function hasEtcdData(dataDir: string): boolean {
  const wal = `${dataDir}/member/wal`;
  return existsSync(wal) && readdirSync(wal).some((f) => f.endsWith('.wal'));
}

export function dataGuardCommand(argv: string[]): number {
  const { values } = parseArgs({ args: argv, options: {
    'data-dir': { type: 'string' }, marker: { type: 'string' }, leftover: { type: 'string' }, 'expect-data': { type: 'boolean', default: false },
  } });
  const [dataDir, marker] = [values['data-dir'], values.marker];
  if (!dataDir || !marker) throw new UsageError('--data-dir and --marker are required');
  const expected = values['expect-data'] || existsSync(marker);
  if (expected && !hasEtcdData(dataDir)) {
    const reason = `the data directory ${dataDir} is empty, but this member has started before: it must not rejoin under its old ID`;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), component: 'data-guard', msg: reason })}\n`);
    return DATA_LOST_EXIT;
  }
  // A pod that restores runs its restore steps after this one: a snapshot left here now is a past restore's.
  if (values.leftover && hasEtcdData(dataDir)) rmSync(values.leftover, { force: true });
  mkdirSync(dirname(marker), { recursive: true });
  writeFileSync(marker, `${new Date().toISOString()}\n`);
  return 0;
}
