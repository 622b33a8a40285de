import { ApiError } from './transport.js';
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
 * only taken once it has gone unrenewed for its duration, measured on this process's own clock from when
 * this process last saw the record change (no trust in other clocks); a leader that fails to renew within
 * the renew deadline stops leading before anyone else may acquire.
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
   * Waits until this process holds the lease, calls lead() with a signal that aborts the moment leadership is
   * lost (or `signal` aborts), and resolves when leadership ends. Call again to stand for election anew.
   */
  async run(signal: AbortSignal, lead: (leading: AbortSignal) => void): Promise<void> {
    while (!signal.aborted && !(await this.tryAcquireOrRenew())) await sleep(this.retryPeriodMs, signal);
    if (signal.aborted) return;
    const leading = new AbortController();
    const stepDown = (): void => {
      leading.abort();
    };
    signal.addEventListener('abort', stepDown, { once: true });
    lead(leading.signal);
    let lastRenew = Date.now();
    while (!isAborted(leading.signal)) {
      await sleep(this.retryPeriodMs, leading.signal);
      if (isAborted(leading.signal)) break;
      if (await this.tryAcquireOrRenew()) lastRenew = Date.now();
      else if (Date.now() - lastRenew >= this.renewDeadlineMs) leading.abort();
    }
    signal.removeEventListener('abort', stepDown);
    if (isAborted(signal)) await this.release();
  }

  /** One attempt; true when this process holds the lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    try {
      const current = await this.read();
      const spec: NonNullable<Lease['spec']> = {
        holderIdentity: this.options.identity,
        leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      };
      if (!current) {
        await this.transport.call('POST', this.path, { metadata: { name: this.options.leaseName }, spec });
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
      await this.transport.call('PUT', `${this.path}/${this.options.leaseName}`, {
        metadata: { name: this.options.leaseName, resourceVersion: current.metadata?.resourceVersion },
        spec,
      });
      this.observe(spec, now);
      return true;
    } catch (err) {
      // A conflict means someone else wrote first: simply not the leader this round.
      if (!(err instanceof ApiError && err.status === 409)) this.options.onError?.(err);
      return false;
    }
  }

  private observe(spec: NonNullable<Lease['spec']>, at: number): void {
    this.observed = { record: JSON.stringify(spec), at };
  }

  private async read(): Promise<Lease | undefined> {
    try {
      return (await this.transport.call('GET', `${this.path}/${this.options.leaseName}`)) as Lease;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** On a clean shutdown, hand the lease over at once instead of making the next leader wait it out. */
  private async release(): Promise<void> {
    try {
      const current = await this.read();
      if (current?.spec?.holderIdentity !== this.options.identity) return;
      await this.transport.call('PUT', `${this.path}/${this.options.leaseName}`, {
        metadata: { name: this.options.leaseName, resourceVersion: current.metadata?.resourceVersion },
        spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(Date.now()) },
      });
    } catch (err) {
      this.options.onError?.(err);
    }
  }
}
