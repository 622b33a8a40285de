import type { Logger } from '../../runtime/log.js';
import type { EtcdClient } from '../../etcd/client.js';
import { firstAnswer } from '../backup/source.js';
import { sleep } from '../../runtime/abortable.js';

/** Where a hold reaches the restored store now: its client, and its members' endpoints (they change as members roll). */
export type HoldTarget = () => Promise<{ etcd: EtcdClient; endpoints: string[] }>;

/** How often a hold lists the store's leases (and looks for the store before it answers). */
const LOOK_MS = 250;
/** Keep-alives sent at once. */
const BATCH = 16;

/**
 * Keeps every lease of a restored store alive while its restore runs. `etcdutl snapshot restore` keeps the
 * snapshot's leases and the restored cluster's first leader gives each its TTL anew: a lease of 10 s (Kubernetes'
 * master leases are 15 s) would expire there, and delete its keys at a revision the source never had, before the
 * change log is replayed or the restore is judged. A hold starts before the first member does, so the first
 * renewal comes within a listing period of etcd answering; each lease is renewed at a third of its TTL. Once the
 * restore has ended the hold is released and the leases run out as they would have on the source.
 */
export class LeaseHolds {
  private readonly held = new Map<string, AbortController>();

  constructor(private readonly term: AbortSignal, private readonly log: Logger) {}

  /** Holds the leases of `key`'s store, unless they already are. */
  hold(key: string, target: HoldTarget): void {
    if (this.held.has(key) || this.term.aborted) return;
    const stop = new AbortController();
    this.held.set(key, stop);
    const ended = AbortSignal.any([stop.signal, this.term]);
    void holdLeases(target, ended, this.log.child({ leaseHold: key })).finally(() => {
      if (this.held.get(key) === stop) this.held.delete(key);
    });
  }

  release(key: string): void {
    this.held.get(key)?.abort();
    this.held.delete(key);
  }
}

async function holdLeases(target: HoldTarget, signal: AbortSignal, log: Logger): Promise<void> {
  /** When each lease is next renewed (ms since the epoch). */
  const due = new Map<string, number>();
  let reached = false;
  while (!signal.aborted) {
    try {
      const { etcd, endpoints } = await target();
      const { endpoint, value: listed } = await firstAnswer(endpoints, (e) => etcd.leases(e));
      if (!reached) log.info({ leases: listed.length, endpoint }, 'holding the restored store\'s leases until the restore ends');
      reached = true;
      for (const id of [...due.keys()]) if (!listed.includes(id)) due.delete(id);
      const now = Date.now();
      const renew = listed.filter((id) => (due.get(id) ?? 0) <= now);
      for (let i = 0; i < renew.length; i += BATCH) {
        // Settled one by one: a lease whose renewal fails is tried on the next look, the others are renewed now.
        await Promise.allSettled(renew.slice(i, i + BATCH).map(async (id) => {
          const ttl = await etcd.leaseKeepAlive(endpoint, id);
          due.set(id, now + Math.max(LOOK_MS, (ttl * 1000) / 3));
        }));
      }
    } catch (err) {
      // Not up yet, or a member rolled away: the next look tries every member again.
      if (reached) log.debug({ err }, 'lease renewal failed; trying again');
    }
    await sleep(LOOK_MS, signal);
  }
}
