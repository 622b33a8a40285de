import type { RateLimiter } from './rate-limit.js';

/** Observers of a queue, for metrics; every hook is optional. */
export interface QueueObserver {
  added?(key: string): void;
  retried?(key: string): void;
  depth?(depth: number): void;
  /** Seconds a key waited in the queue before a worker took it. */
  waited?(seconds: number): void;
}

/**
 * A work queue with client-go's guarantees:
 * - a key queued several times before a worker takes it is processed once (dedup);
 * - a key is never handed to two workers at once: added while processing, it is queued again on done();
 * - delayed adds keep the earliest due time; rate-limited adds back off per key;
 * - shutdown wakes idle workers and can wait for the keys in flight to finish (drain).
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly queuedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { dueAt: number; timer: NodeJS.Timeout }>();
  /** Keys added by anything but their own delayed add (a change seen, a first sync) since a worker last took them. */
  private readonly asked = new Set<string>();
  /** Keys being worked on that a worker took with nothing but their delayed add behind them. */
  private readonly timed = new Set<string>();
  private readonly idleWorkers: ((key: string | undefined) => void)[] = [];
  private drained: (() => void) | undefined;
  private shuttingDown = false;

  constructor(private readonly rateLimiter: RateLimiter, private readonly observer: QueueObserver = {}) {}

  get length(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (!this.shuttingDown) this.asked.add(key);
    this.queueKey(key);
  }

  /**
   * Whether the key, as a worker took it (until done), was due only to its delayed add (a requeue after, a retry's
   * backoff): nothing changed in what the controller watches since it was last taken.
   */
  timedOnly(key: string): boolean {
    return this.timed.has(key);
  }

  private queueKey(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.observer.added?.(key);
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const dueAt = Date.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.dueAt <= dueAt) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.queueKey(key);
    }, delayMs);
    this.delayed.set(key, { dueAt, timer });
  }

  /** Queues the key again after its backoff: for a failed attempt. */
  addRateLimited(key: string): void {
    this.observer.retried?.(key);
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Clears the key's backoff: for a successful attempt. */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  failures(key: string): number {
    return this.rateLimiter.failures(key);
  }

  /**
   * The next key to work on, or undefined once the queue is shutting down, even with keys still queued: work
   * that ends (a leadership term) must not start anything new. Pair with done().
   */
  async get(): Promise<string | undefined> {
    if (this.shuttingDown) return undefined;
    const key = this.queue.shift();
    if (key !== undefined) return this.take(key);
    return new Promise((resolve) => this.idleWorkers.push(resolve));
  }

  done(key: string): void {
    this.processing.delete(key);
    this.timed.delete(key);
    if (this.dirty.has(key)) this.enqueue(key);
    if (this.shuttingDown && this.processing.size === 0) this.drained?.();
  }

  /** Stops handing out keys; with drain, resolves once every key in flight is done. */
  async shutDown(drain: boolean): Promise<void> {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    for (const worker of this.idleWorkers.splice(0)) worker(undefined);
    if (!drain || this.processing.size === 0) return;
    await new Promise<void>((resolve) => (this.drained = resolve));
  }

  private enqueue(key: string): void {
    this.queuedAt.set(key, Date.now());
    const worker = this.idleWorkers.shift();
    if (worker) {
      worker(this.take(key));
    } else {
      this.queue.push(key);
      this.observer.depth?.(this.queue.length);
    }
  }

  private take(key: string): string {
    this.dirty.delete(key);
    if (this.asked.delete(key)) this.timed.delete(key);
    else this.timed.add(key);
    this.processing.add(key);
    const since = this.queuedAt.get(key);
    this.queuedAt.delete(key);
    if (since !== undefined) this.observer.waited?.((Date.now() - since) / 1000);
    this.observer.depth?.(this.queue.length);
    return key;
  }
}
