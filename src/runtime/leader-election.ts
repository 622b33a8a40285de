import { ApiError, getIfExists } from './transport.js';
import { isAborted, sleep } from './abortable.js';
import { microTime } from './time.js';
import type { ApiTransport } from './transport.js';

export interface LeaderElectionOptions {
  namespace: string;
  leaseName: string;
  identity: string;
  /** How long a lease holds without renewal before others may take it (client-go default 15 s). */
  leaseDurationMs?: number;
  /** A leader that cannot renew within this long gives up leadership (default 10 s; less than the lease). */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew (default 2 s). */
  retryPeriodMs?: number;
  onError?(err: unknown): void;
}

interface Lease {
  metadata?: { resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}


/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules: a lease held by another is
 * only taken once it has gone unrenewed for its duration, measured on this process's own monotonic clock from
 * when this process last saw the record change (no trust in other clocks or in wall time); a leader that fails
 * to renew within the renew deadline stops leading before anyone else may acquire.
 *
 * It is a fence only if the old leader's work really stops in time, so: every attempt is bounded by the time
 * left to the deadline (a black-holed connection cannot hold a renewal past it); the deadline counts from when
 * the last successful renewal was *sent* (the server wrote it no earlier, and a successor counts its lease
 * duration from when it saw that write); and the lease is released only after the term's work has ended.
 */
export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observed: { record: string; at: number } | undefined;

  constructor(private readonly transport: ApiTransport, private readonly options: LeaderElectionOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.renewDeadlineMs >= this.leaseDurationMs) throw new Error('renewDeadline must be shorter than leaseDuration');
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.options.namespace}/leases`;
  }

  /**
   * Waits until this process holds the lease, then runs lead() with a signal that aborts the moment leadership
   * is lost (or `signal` aborts), and resolves once the work lead() answered has ended; on a shutdown, the lease
   * is handed over only then. Call again to stand for election anew.
   */
  async run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<void> {
    let renewed: number;
    for (;;) {
      renewed = performance.now();
      if (signal.aborted) return;
      if (await this.tryAcquireOrRenew(this.renewDeadlineMs, signal)) break;
      await sleep(this.retryPeriodMs, signal);
    }
    const leading = new AbortController();
    const stepDown = (): void => {
      leading.abort(new Error('shutting down'));
    };
    signal.addEventListener('abort', stepDown, { once: true });
    const working = lead(leading.signal);
    while (!isAborted(leading.signal)) {
      await sleep(Math.min(this.retryPeriodMs, renewed + this.renewDeadlineMs - performance.now()), leading.signal);
      if (isAborted(leading.signal)) break;
      const attempt = performance.now();
      const left = renewed + this.renewDeadlineMs - attempt;
      if (left > 0 && (await this.tryAcquireOrRenew(left, leading.signal))) renewed = attempt;
      else if (performance.now() - renewed >= this.renewDeadlineMs) leading.abort(new Error(`lease not renewed within ${this.renewDeadlineMs} ms`));
    }
    signal.removeEventListener('abort', stepDown);
    await working;
    if (isAborted(signal)) await this.release();
  }

  /** One attempt, given up after `withinMs`; true when this process holds the lease afterwards. */
  private async tryAcquireOrRenew(withinMs: number, signal: AbortSignal): Promise<boolean> {
    const now = performance.now();
    const wall = Date.now();
    const api = this.transport.within(signal, withinMs);
    try {
      const current = await this.read(api);
      const spec: NonNullable<Lease['spec']> = {
        holderIdentity: this.options.identity,
        leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
        acquireTime: microTime(wall),
        renewTime: microTime(wall),
        leaseTransitions: 0,
      };
      if (!current) {
        await api.call('POST', this.path, { metadata: { name: this.options.leaseName }, spec });
        this.observe(spec, now);
        return true;
      }
      const held = current.spec ?? {};
      const record = JSON.stringify(held);
      if (this.observed?.record !== record) this.observed = { record, at: now };
      const mine = held.holderIdentity === this.options.identity;
      const expired = this.observed.at + (held.leaseDurationSeconds ?? 0) * 1000 <= now;
      if (held.holderIdentity && !mine && !expired) return false;
      if (mine) {
        spec.acquireTime = held.acquireTime;
        spec.leaseTransitions = held.leaseTransitions ?? 0;
      } else {
        spec.leaseTransitions = (held.leaseTransitions ?? 0) + 1;
      }
      await api.call('PUT', `${this.path}/${this.options.leaseName}`, {
        metadata: { name: this.options.leaseName, resourceVersion: current.metadata?.resourceVersion },
        spec,
      });
      this.observe(spec, now);
      return true;
    } catch (err) {
      // A conflict means someone else wrote first: simply not the leader this round.
      if (!(err instanceof ApiError && err.status === 409) && !signal.aborted) this.options.onError?.(err);
      return false;
    }
  }

  private observe(spec: NonNullable<Lease['spec']>, at: number): void {
    this.observed = { record: JSON.stringify(spec), at };
  }

  private async read(api: ApiTransport): Promise<Lease | undefined> {
    return getIfExists<Lease>(api, `${this.path}/${this.options.leaseName}`);
  }

  /** On a clean shutdown, hand the lease over at once instead of making the next leader wait it out. */
  private async release(): Promise<void> {
    // Each call bounded by the renew deadline: the term has ended, no signal is left to end it.
    const api = this.transport.within(undefined, this.renewDeadlineMs);
    try {
      const current = await this.read(api);
      if (current?.spec?.holderIdentity !== this.options.identity) return;
      await api.call('PUT', `${this.path}/${this.options.leaseName}`, {
        metadata: { name: this.options.leaseName, resourceVersion: current.metadata?.resourceVersion },
        spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(Date.now()) },
      });
    } catch (err) {
      this.options.onError?.(err);
    }
  }
}
