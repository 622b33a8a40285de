import type { EtcdClient } from '../../etcd/client.js';
import { compactedAway } from '../../etcd/etcd-error.js';

/**
 * How a restored store numbers the source's revisions. `etcdutl snapshot restore --bump-revision B
 * --mark-compacted` leaves the snapshot's keys at their revisions, puts the store at `held + B` (the snapshot's own
 * revision raised) and compacts everything below: the source's state at `held` is read there, and a revision r
 * of the source replayed after it lands at r + B. Without a bump (B = 0) the numbers are the source's.
 */
export interface RevisionShift {
  /** The source's revision the snapshot held. */
  held: number;
  /** EtcdRestore.spec.revisionBump. */
  bump: number;
}

export const UNSHIFTED: RevisionShift = { held: 0, bump: 0 };

/** The revision a key written at the source's revision `r` carries in the restored store. */
export const keyRevision = (s: RevisionShift, r: number): number => (r > s.held ? r + s.bump : r);

/** The restored store's revision that shows the source as it was at `r` (r at or past the snapshot's). */
export const storeRevisionOf = (s: RevisionShift, r: number): number => (r >= s.held ? r + s.bump : r);

/** The source's revision that the restored store's revision `x` shows (x at or past the bumped one). */
export const sourceRevisionOf = (s: RevisionShift, x: number): number => (x >= s.held + s.bump ? x - s.bump : x);

/**
 * How the restored store numbers the source's revisions, found in the store itself. etcdutl raises the newest
 * revision that left a key in the snapshot by the bump and marks everything below compacted, so the lowest
 * revision the store can still read is that one raised. Every revision but an empty store's first leaves a key
 * (a compaction keeps the tombstones at its own revision: seen on the lab), so that is usually the snapshot's own
 * revision, at least the one it is named by, and the shift is the bump. A snapshot of an empty store (revision 1,
 * no key) is raised from 0: the store stands one below the name plus the bump, and the source's revisions after
 * it land one less raised (seen in CI: a continuous backup's first snapshot taken before the first write, its
 * replay reading revision 2 of a store bumped from 0). Revisions past the lowest readable one (a lease of the
 * snapshot that ran out before it was held) are checked against the change log like any other. A store below
 * the bump was not bumped (its members were made before restores bumped, and the spec's default came later): its
 * numbers are the source's.
 */
export async function restoredShift(etcd: EtcdClient, endpoint: string, named: number, bump: number): Promise<RevisionShift> {
  const unbumped = { held: named, bump: 0 };
  if (bump === 0) return unbumped;
  let lo = bump;
  let hi = await etcd.currentRevision(endpoint);
  if (hi < lo) return unbumped;
  const readable = async (x: number): Promise<boolean> => etcd.keyCount(endpoint, x).then(() => true, (err: unknown) => {
    if (compactedAway(err)) return false;
    throw err;
  });
  // The lowest readable revision in [lo, hi]: hi always is.
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await readable(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo - bump >= named ? { held: lo - bump, bump } : { held: named, bump: lo - named };
}
