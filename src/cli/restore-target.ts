/**
 * Where a restore's etcdutl step writes, and the tidying after it. A member pod's restore steps run again each
 * time its sandbox is made anew (a node reboot), and etcdutl refuses a data directory that is not empty, with no
 * shell in the etcd image to skip it: so etcdutl writes through a link, which points at the data directory the
 * first time and at a scratch directory once the data is there, and the tidy step removes the snapshot, the link
 * and the scratch after it.
 */
import { existsSync, linkSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { hasEtcdData } from './etcd-data.js';

export interface RestoreTarget {
  /** Where the fetched snapshot lies for etcdutl. */
  snapshot: string;
  /** The link etcdutl's --data-dir names. */
  into: string;
  /** A directory on the scratch volume etcdutl may fill, for nothing. */
  scratch: string;
  /** The member's data directory. */
  dataDir: string;
}

/** What the fetch step must do: fetch the snapshot, or nothing, the member's data being there. */
export type TargetState = 'restore' | 'restored';

/**
 * Sets the link for this run of the steps. With the member's data there (the steps ran before, and etcd perhaps
 * served since), etcdutl is given that data's own database to read (a hard link: no byte copied, nothing written
 * through it) and the empty scratch to write into. Otherwise the data directory is made empty for etcdutl: what
 * is there without a write-ahead log is an earlier etcdutl's, cut short before it finished, on which etcd never
 * started (a member on a claim that did start is stopped by the data guard before this step).
 */
export function prepareTarget(t: RestoreTarget): TargetState {
  rmSync(t.into, { force: true });
  if (hasEtcdData(t.dataDir)) {
    rmSync(t.scratch, { recursive: true, force: true });
    mkdirSync(t.scratch, { recursive: true, mode: 0o700 });
    rmSync(t.snapshot, { force: true });
    linkSync(`${t.dataDir}/member/snap/db`, t.snapshot);
    symlinkSync(t.scratch, t.into);
    return 'restored';
  }
  if (existsSync(t.dataDir)) rmSync(t.dataDir, { recursive: true, force: true });
  // Made here: etcdutl makes its directories with Go's MkdirAll, which fails on a link to nothing.
  mkdirSync(t.dataDir, { recursive: true, mode: 0o700 });
  return 'restore';
}

/** Points the link at the data directory once the snapshot is in place for etcdutl. */
export function targetData(t: RestoreTarget): void {
  rmSync(t.into, { force: true });
  symlinkSync(t.dataDir, t.into);
}

/** After etcdutl: the snapshot (or the link to the data's database), the link and the scratch are removed. */
export function tidyRestore(t: Omit<RestoreTarget, 'dataDir'>): void {
  for (const path of [t.snapshot, `${t.snapshot}.partial`, t.into]) rmSync(path, { force: true });
  rmSync(t.scratch, { recursive: true, force: true });
}
