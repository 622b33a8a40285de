import { randomBytes } from 'node:crypto';
import type { Logger } from './log.js';
import { WorkQueue } from './workqueue.js';
import type { QueueObserver } from './workqueue.js';
import { defaultControllerRateLimiter } from './rate-limit.js';
import type { RateLimiter } from './rate-limit.js';
import type { Reflector, ResourceHandler } from './reflector.js';
import { objectKey } from './store.js';
import type { KubeObject } from './store.js';

export interface ReconcileResult {
  /** Reconcile this key again after this long even if nothing changes (e.g. to poll etcd). */
  requeueAfterMs?: number;
}

export interface ReconcileContext {
  log: Logger;
  reconcileId: string;
  /** Due only to the key's own requeue or retry: no change to anything the controller watches came since its last pass. */
  timedOnly: boolean;
}

export type Reconcile = (key: string, context: ReconcileContext) => Promise<ReconcileResult | undefined>;

/** What a controller reports about each reconcile, for metrics. */
export interface ReconcileObserver {
  reconciled?(result: 'success' | 'error' | 'requeue_after', seconds: number): void;
}

export interface ControllerOptions {
  name: string;
  reconcile: Reconcile;
  log: Logger;
  workers?: number;
  rateLimiter?: RateLimiter;
  queueObserver?: QueueObserver;
  reconcileObserver?: ReconcileObserver;
}

/**
 * An update filter for `watches`: only changes that moved metadata.generation (the spec), not the status
 * the controller writes itself, which would otherwise re-trigger it after every pass.
 */
export const generationChanged = (old: KubeObject, now: KubeObject): boolean => old.metadata?.generation !== now.metadata?.generation;

/**
 * Runs reconcile(key) on N workers fed by one work queue. Keys are `namespace/name` of the primary kind;
 * changes to owned objects enqueue their controller owner's key. A failed reconcile is retried with
 * per-key backoff; a success clears the backoff and honours requeueAfterMs.
 */
export class Controller {
  readonly queue: WorkQueue;

  constructor(private readonly options: ControllerOptions) {
    this.queue = new WorkQueue(options.rateLimiter ?? defaultControllerRateLimiter(), options.queueObserver);
  }

  /** Reconcile the object itself when it is added or deleted, and on the updates `relevant` lets through. */
  watches<T extends KubeObject>(reflector: { on(handler: ResourceHandler<T>): unknown }, relevant: (old: T, now: T) => boolean = () => true): this {
    const enqueue = (o: T): void => {
      this.queue.add(objectKey(o));
    };
    reflector.on({ added: enqueue, updated: (old, o) => { if (relevant(old, o)) enqueue(o); }, deleted: enqueue });
    return this;
  }

  /** Reconcile the owner (of `ownerKind`, through the controller owner reference) of a changed object. */
  owns<T extends KubeObject>(reflector: Reflector<T>, ownerKind: string): this {
    return this.maps(reflector, (o) => o.metadata?.ownerReferences?.find((r) => r.controller && r.kind === ownerKind)?.name);
  }

  /** Reconcile the object of this kind, in the changed object's namespace, that `nameOf` names, if any. */
  maps<T extends KubeObject>(reflector: Reflector<T>, nameOf: (o: T) => string | undefined): this {
    return this.fansOut(reflector, (o) => {
      const name = nameOf(o);
      if (!name) return [];
      return [o.metadata?.namespace ? `${o.metadata.namespace}/${name}` : name];
    });
  }

  /**
   * Reconcile every key `keysOf` gives for a changed object (one a cluster-scoped object concerns, say), on
   * the updates `relevant` lets through; both the old and the new object are asked.
   */
  fansOut<T extends KubeObject>(reflector: { on(handler: ResourceHandler<T>): unknown }, keysOf: (o: T) => string[], relevant: (old: T, now: T) => boolean = () => true): this {
    const enqueue = (o: T): void => {
      for (const key of keysOf(o)) this.queue.add(key);
    };
    reflector.on({ added: enqueue, updated: (old, o) => { if (relevant(old, o)) { enqueue(old); enqueue(o); } }, deleted: enqueue });
    return this;
  }

  /** Works until the signal aborts, then lets reconciles in flight finish. */
  async run(signal: AbortSignal): Promise<void> {
    const workers = Array.from({ length: this.options.workers ?? 2 }, () => this.work());
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => { resolve(); }, { once: true });
    });
    await this.queue.shutDown(true);
    await Promise.all(workers);
  }

  private async work(): Promise<void> {
    for (let key = await this.queue.get(); key !== undefined; key = await this.queue.get()) {
      await this.reconcileOne(key);
      this.queue.done(key);
    }
  }

  private async reconcileOne(key: string): Promise<void> {
    const reconcileId = randomBytes(6).toString('hex');
    const log = this.options.log.child({ controller: this.options.name, key, reconcileId });
    const started = process.hrtime.bigint();
    const seconds = (): number => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const result = await this.options.reconcile(key, { log, reconcileId, timedOnly: this.queue.timedOnly(key) });
      this.queue.forget(key);
      if (result?.requeueAfterMs !== undefined) this.queue.addAfter(key, result.requeueAfterMs);
      this.options.reconcileObserver?.reconciled?.(result?.requeueAfterMs !== undefined ? 'requeue_after' : 'success', seconds());
    } catch (err) {
      log.error({ err, retries: this.queue.failures(key) }, 'reconcile failed; will retry with backoff');
      this.queue.addRateLimited(key);
      this.options.reconcileObserver?.reconciled?.('error', seconds());
    }
  }
}
