import { rfc3339 } from '../../runtime/time.js';
import type { BackupStatus } from '../../api/etcd-backup.js';
import { ChangeLog, GAPS_KEPT } from './change-log.js';
import type { ChangeLogSettings, ChangeLogState } from './change-log.js';

type Condition = NonNullable<BackupStatus['conditions']>[number];
export type ChangeLogStatus = NonNullable<BackupStatus['changeLog']>;

/** The change logs the operator keeps, one per continuous EtcdBackup, for as long as its term lasts. */
export class ChangeLogs {
  private readonly running = new Map<string, { version: string; log: ChangeLog; close: () => void }>();

  constructor(private readonly term: AbortSignal) {}

  /**
   * The log of `key`, started if it is not running, or restarted if it runs for another `version` of the
   * backup's spec. `open` makes its settings and what to release when it stops.
   */
  async ensure(key: string, version: string, open: () => Promise<{ settings: ChangeLogSettings; close: () => void }>): Promise<ChangeLog> {
    const current = this.running.get(key);
    if (current?.version === version) return current.log;
    await this.stop(key);
    const { settings, close } = await open();
    const log = new ChangeLog(settings, this.term);
    this.running.set(key, { version, log, close });
    return log;
  }

  async stop(key: string): Promise<void> {
    const current = this.running.get(key);
    if (!current) return;
    this.running.delete(key);
    await current.log.stop();
    current.close();
  }
}

/**
 * The status of a change log: what the log holds now, the gaps recorded before (a restart forgets its own,
 * the status keeps them), and a condition that says whether it is following. Behind means no confirmation
 * for three chunk periods.
 */
export function changeLogStatus(
  state: Readonly<ChangeLogState>, previous: ChangeLogStatus | undefined, nowMs: number, chunkSeconds: number,
): { changeLog: ChangeLogStatus; condition: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'> } {
  const gaps = (previous?.gaps ?? []).map((g) => ({ ...g }));
  for (const g of state.gaps) {
    // A gap grows once the log resumes after it (to the snapshot it resumes from): the same gap, by where it starts.
    const known = gaps.find((p) => p.from === g.from);
    if (known) known.to = Math.max(known.to ?? 0, g.to);
    else gaps.push({ from: g.from, to: g.to, detectedAt: rfc3339(g.detectedAtMs) });
  }
  const rpoSeconds = state.confirmedAtMs === undefined ? undefined : Math.ceil((nowMs - state.confirmedAtMs) / 1000);
  const changeLog: ChangeLogStatus = {
    ...(state.fromRevision === undefined ? {} : { fromRevision: state.fromRevision }),
    ...(state.throughRevision === undefined ? {} : { throughRevision: state.throughRevision }),
    ...(state.confirmedAtMs === undefined ? {} : { confirmedAt: rfc3339(state.confirmedAtMs) }),
    ...(rpoSeconds === undefined ? {} : { rpoSeconds }),
    ...(gaps.length === 0 ? {} : { gaps: gaps.slice(-GAPS_KEPT) }),
  };
  const type = 'ChangeLog';
  const lastGap = state.gaps[state.gaps.length - 1];
  if (state.needsSnapshotFrom !== undefined) {
    return {
      changeLog, condition: lastGap
        ? { type, status: 'False', reason: 'Gap', message: `revisions ${lastGap.from}-${lastGap.to} were compacted by etcd before they were stored; the log resumes after a new full snapshot` }
        : { type, status: 'False', reason: 'WaitingForSnapshot', message: 'the log starts after the first full snapshot' },
    };
  }
  if (rpoSeconds === undefined || rpoSeconds > 3 * chunkSeconds) {
    const since = rpoSeconds === undefined ? 'not confirmed yet' : `last confirmed ${rpoSeconds} s ago`;
    return { changeLog, condition: { type, status: 'False', reason: 'Behind', message: `${since}${state.error ? `: ${state.error}` : ''}` } };
  }
  return {
    changeLog,
    condition: { type, status: 'True', reason: 'Following', message: `every revision through ${state.throughRevision ?? 0} is stored, confirmed ${rpoSeconds} s ago` },
  };
}
