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
