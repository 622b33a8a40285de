import { datedPeriodicBackups } from './naming.js';

/** A tier of retention: the newest backup of each `everySeconds` period (UTC, from the epoch) is kept for `forSeconds`. */
export interface RetentionTier {
  everySeconds: number;
  forSeconds: number;
}

/** What periodic backups are kept: the newest `maxBackups` (all when 0), and with tiers only those a tier keeps. */
export interface Retention {
  maxBackups: number;
  tiers: RetentionTier[];
}

/**
 * Which periodic backups of `base` retention removes at `nowMs` (injected: the tests run a month in a
 * moment). The newest always stays. Beyond it, with tiers, a backup stays only if some tier keeps it: it is
 * the newest of its period and no older than the tier's span (every hour for a day, every day for a month…);
 * and with maxBackups, only the newest maxBackups stay. Both rules apply when both are set.
 */
export function expired(names: readonly string[], base: string, retention: Retention, nowMs: number): string[] {
  const newestDated = datedPeriodicBackups(names, base).reverse();
  const newestFirst = newestDated.map((b) => b.name);
  const kept = new Set(newestFirst.slice(0, 1));
  if (retention.tiers.length > 0) {
    for (const tier of retention.tiers) {
      const periods = new Set<number>();
      for (const { name, takenAtMs: at } of newestDated) {
        const period = Math.floor(at / (tier.everySeconds * 1000));
        if (nowMs - at > tier.forSeconds * 1000 || periods.has(period)) continue;
        periods.add(period);
        kept.add(name);
      }
    }
  } else {
    for (const name of newestFirst) kept.add(name);
  }
  const capped = retention.maxBackups > 0 ? new Set(newestFirst.slice(0, retention.maxBackups)) : undefined;
  return newestFirst.filter((name) => !kept.has(name) || (capped !== undefined && !capped.has(name))).reverse();
}

/** The retention a backup's spec asks for. */
export const retentionOf = (policy: { maxBackups?: number; retention?: RetentionTier[] } | undefined): Retention =>
  ({ maxBackups: policy?.maxBackups ?? 0, tiers: policy?.retention ?? [] });

/** Tiers as a command-line value, `EVERY:FOR,…` in seconds (for the Volume backup's pod), and back. */
export const tiersArg = (tiers: RetentionTier[]): string => tiers.map((t) => `${t.everySeconds}:${t.forSeconds}`).join(',');

export function parseTiers(text: string): RetentionTier[] {
  return text.split(',').filter((t) => t !== '').map((t) => {
    const [every, span] = t.split(':').map(Number);
    if (!every || !span || every <= 0 || span < every) throw new Error(`--retention: ${t} is not EVERY:FOR with FOR ≥ EVERY > 0 (seconds)`);
    return { everySeconds: every, forSeconds: span };
  });
}
