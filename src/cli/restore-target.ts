/**
 * Where a restore's etcdutl step writes, and the tidying after it. A member pod's restore steps run again each
 * time its sandbox is made anew (a node reboot), and etcdutl refuses a data directory that is not empty, with no
 * shell in the etcd image to skip it: so etcdutl reads its snapshot and writes its data directory through links
 * on the pod's scratch volume, which the fetch step points each time. The first time they name the fetched
 * snapshot and the member's data directory. Once the restore is complete (etcdutl ran through and the tidy step
 * recorded it: etcd starts only after that), they name the member's own database and an empty scratch directory,
 * and nothing is fetched. The links are on the scratch volume (the node's disk) so that the member's volume need
 * take neither a link nor the snapshot's room.
 */
import { existsSync, fsyncSync, mkdirSync, openSync, closeSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { hasEtcdData } from './etcd-data.js';

export interface RestoreLinks {
  /** Where etcdutl reads the snapshot: the fetched file, or a link to the member's database. */
  snapshot: string;
  /** The link etcdutl's --data-dir names. */
  into: string;
  /** A directory on the scratch volume etcdutl may fill, for nothing. */
  scratch: string;
}

export interface RestoreTarget extends RestoreLinks {
  /** The member's data directory. */
  dataDir: string;
  /** Written beside the data directory once a restore is complete: etcdutl ran through. */
  complete: string;
}

/** What the fetch step must do: fetch the snapshot, or nothing, the member's restored data being there. */
export type TargetState = 'restore' | 'restored';

/** The member's data is gone after its restore was complete: etcd may have served from it, and restoring the snapshot again would bring back only the past. */
export class RestoredDataLost extends Error {
  constructor(dataDir: string) {
    super(`the data directory ${dataDir} is empty, but this member's restore was complete and it may have served since: it must not start again from the snapshot under its old ID`);
    this.name = 'RestoredDataLost';
  }
}

/**
 * Sets the links for this run of the steps. A data directory with a write-ahead log but no record of a complete
 * restore is an etcdutl cut short (it writes the log before it has finished the database), on which etcd never
 * started: like one without a log, it is emptied and restored again. A member on a claim that did start is stopped
 * by the data guard before this step.
 */
export function prepareTarget(t: RestoreTarget): TargetState {
  for (const link of [t.into, t.snapshot]) rmSync(link, { force: true });
  const data = hasEtcdData(t.dataDir);
  const complete = existsSync(t.complete);
  if (complete && !data) throw new RestoredDataLost(t.dataDir);
  if (complete) {
    rmSync(t.scratch, { recursive: true, force: true });
    mkdirSync(t.scratch, { recursive: true, mode: 0o700 });
    // etcdutl only reads its snapshot (and copies it into the scratch), so the database is never written through this.
    symlinkSync(`${t.dataDir}/member/snap/db`, t.snapshot);
    symlinkSync(t.scratch, t.into);
    return 'restored';
  }
  rmSync(t.dataDir, { recursive: true, force: true });
  // Made here: etcdutl makes its directories with Go's MkdirAll, which fails on a link to nothing.
  mkdirSync(t.dataDir, { recursive: true, mode: 0o700 });
  return 'restore';
}

/** Points the link at the data directory once the snapshot is in place for etcdutl. */
export function targetData(t: RestoreTarget): void {
  rmSync(t.into, { force: true });
  symlinkSync(t.dataDir, t.into);
}

/** Writes a small file and flushes it, and its directory's entry for it, to disk: a record that must outlast a power cut. */
function durably(path: string, text: string): void {
  for (const [target, flags] of [[path, 'w'], [dirname(path), 'r']] as const) {
    const fd = openSync(target, flags);
    try {
      if (target === path) writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * After etcdutl: records the restore complete (and, on a claim, that etcd is about to start, for the data guard),
 * then removes the snapshot (or the link to the data's database), the link and the scratch.
 */
export function tidyRestore(t: RestoreLinks & { complete?: string; started?: string }): void {
  const now = `${new Date().toISOString()}\n`;
  for (const record of [t.complete, t.started]) {
    if (record === undefined) continue;
    if (!existsSync(record)) durably(record, now);
  }
  for (const path of [t.snapshot, `${t.snapshot}.partial`, t.into]) rmSync(path, { force: true });
  rmSync(t.scratch, { recursive: true, force: true });
}
