import type { BackupStorage } from './storage.js';

/**
 * Names of periodic backups, as the CoreOS operator made them: `<base>_v<revision>_<YYYY-MM-DD-hh:mm:ss>`
 * (UTC), so existing buckets keep their order and retention.
 */
export function periodicName(base: string, revision: number, at: Date): string {
  const stamp = at.toISOString().slice(0, 19).replace('T', '-');
  return `${base}_v${revision}_${stamp}`;
}

/** What follows the base in a periodic backup's name, and nothing else: `prod_v2_v7_…` is `prod_v2`'s, never `prod`'s. */
const PERIODIC = /^_v(\d+)_(\d{4}-\d{2}-\d{2})-(\d{2}:\d{2}:\d{2})$/;

/** The periodic backups of `base` among `names` with when each was taken (from its UTC stamp) and the revision in its name, oldest first (by time, then revision). */
export function datedPeriodicBackups(names: readonly string[], base: string): { name: string; takenAtMs: number; revision: number }[] {
  const parsed = names.flatMap((name) => {
    const m = name.startsWith(base) ? PERIODIC.exec(name.slice(base.length)) : null;
    return m ? [{ name, takenAtMs: Date.parse(`${m[2] ?? ''}T${m[3] ?? ''}Z`), revision: Number(m[1]) }] : [];
  });
  return parsed.sort((a, b) => a.takenAtMs - b.takenAtMs || a.revision - b.revision);
}

/**
 * Beside a periodic backup whose snapshot holds a later revision than its name (the name is given before the
 * snapshot begins, and writes came meanwhile): an object whose text is the revision the snapshot holds. A restore
 * to a point in time chooses its snapshot by it, so never one past its target; without it, the name's revision.
 */
export const HELD_SUFFIX = '.held';

/**
 * The snapshots as a point-in-time choice needs them: by the revision each holds, newest name first, from its
 * `HELD_SUFFIX` object where it has one, until one holds no more than `target` (an older one holds at most the next
 * one's name); the name's revision otherwise, the lowest it may hold (also when the object cannot be read: retention
 * may remove it meanwhile, and the choice is then as it was before such objects).
 */
export async function heldRevisions<T extends { name: string; revision: number }>(snapshots: readonly T[], names: readonly string[], target: number, storage: Pick<BackupStorage, 'get'>): Promise<T[]> {
  const listed = new Set(names);
  const byHeld = [...snapshots];
  const newestFirst = [...snapshots.entries()].filter(([, s]) => s.revision <= target).sort(([, a], [, b]) => b.revision - a.revision);
  for (const [i, s] of newestFirst) {
    if (!listed.has(`${s.name}${HELD_SUFFIX}`)) break;
    const held = await heldRevision(`${s.name}${HELD_SUFFIX}`, storage);
    if (held === undefined || held < s.revision) break;
    byHeld[i] = { ...s, revision: held };
    if (held <= target) break;
  }
  return byHeld;
}

/** The revision a `HELD_SUFFIX` object says; undefined when it cannot be read (checked against its sha256) or is no number. */
async function heldRevision(name: string, storage: Pick<BackupStorage, 'get'>): Promise<number | undefined> {
  try {
    const parts: Buffer[] = [];
    for await (const part of storage.get(name)) parts.push(part);
    const held = Number(Buffer.concat(parts).toString('utf8').trim());
    return Number.isSafeInteger(held) ? held : undefined;
  } catch {
    return undefined;
  }
}
