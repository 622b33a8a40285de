import type { Readable } from 'node:stream';
import { ApiError, ApiTimeout } from './transport.js';
import { isAborted, sleep } from './abortable.js';
import type { ApiTransport } from './transport.js';
import { Store } from './store.js';
import type { KubeObject } from './store.js';

export interface ResourceHandler<T> {
  added?(obj: T): void;
  updated?(old: T, current: T): void;
  deleted?(obj: T): void;
}

export interface ReflectorOptions {
  /** Collection path, e.g. `/api/v1/pods` or `/apis/etcd.database.coreos.com/v1beta2/namespaces/ns/etcdclusters`. */
  path: string;
  labelSelector?: string;
  /** Page size of the initial and every later list. */
  pageSize?: number;
  /**
   * Server-side watch timeout is drawn from [min, 2·min) seconds (default 15), so that many watches don't end
   * together. The API server sends a bookmark 2 s before it, so a healthy watch is never silent for longer.
   */
  minWatchTimeoutSeconds?: number;
  /**
   * A watch silent this long past its timeout (default 5 s) is stalled (a black-holed connection, a server
   * that stopped sending): it is dropped and the collection listed anew.
   */
  stallGraceMs?: number;
  onError?(err: unknown): void;
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

/** Why a watch was dropped by its watchdog. */
const STALLED = Symbol('stalled');

/** The watch must start over from a fresh list: the resourceVersion it would resume from is gone. */
class Expired extends Error {}

const isExpired = (err: unknown): boolean => err instanceof Expired || (err instanceof ApiError && err.status === 410);

/**
 * Keeps a Store equal to the API server's view of one collection: list, then watch from the list's
 * resourceVersion (with bookmarks); a dropped watch resumes from the last resourceVersion seen; 410 Gone
 * relists and reports what changed meanwhile, deletes included. Handlers run after the store is updated.
 */
export class Reflector<T extends KubeObject> {
  readonly store = new Store<T>();
  /** How many full lists were made: 1 after the first sync, more after each 410 or stalled watch. */
  lists = 0;
  /** How many watches were found stalled (silent past their timeout) and dropped. */
  stalls = 0;
  private resourceVersion: string | undefined;
  private synced = false;
  /** When (performance.now()) the cache was last known current: a list, a watch event, a watch served to its end. */
  private currentAt: number | undefined;
  private readonly syncWaiters: (() => void)[] = [];
  private readonly handlers: ResourceHandler<T>[] = [];

  constructor(private readonly transport: ApiTransport, private readonly options: ReflectorOptions) {}

  /** The collection it mirrors. */
  get path(): string {
    return this.options.path;
  }

  /**
   * How long the cache has gone without being known current; 0 before its first list: a cache never filled
   * (its CRD not installed yet, say) is not ready, which is another matter than one that stopped following.
   */
  staleForMs(now = performance.now()): number {
    return this.currentAt === undefined ? 0 : now - this.currentAt;
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Registers a handler; add handlers before run(). */
  on(handler: ResourceHandler<T>): this {
    this.handlers.push(handler);
    return this;
  }

  /**
   * Resolves true once the first list has filled the store, or false if `signal` aborts first: a shutdown
   * (or a lost leadership) before the first sync must not wait for a sync that will never come.
   */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const abandon = (): void => {
        this.syncWaiters.splice(this.syncWaiters.indexOf(synced), 1);
        resolve(false);
      };
      const synced = (): void => {
        signal?.removeEventListener('abort', abandon);
        resolve(true);
      };
      this.syncWaiters.push(synced);
      signal?.addEventListener('abort', abandon, { once: true });
    });
  }

  /** Runs until the signal aborts. Never throws: errors go to onError and are retried with backoff. */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === undefined) await this.relist();
        const progressed = await this.watch(signal);
        failures = progressed ? 0 : failures + 1;
      } catch (err) {
        if (isAborted(signal)) break;
        if (isExpired(err)) {
          this.resourceVersion = undefined;
          continue;
        }
        this.options.onError?.(err);
        failures++;
      }
      if (failures > 0) await sleep(backoffMs(failures), signal);
    }
  }

  private query(extra: Record<string, string>): string {
    const params = new URLSearchParams(extra);
    if (this.options.labelSelector) params.set('labelSelector', this.options.labelSelector);
    return `${this.options.path}?${params.toString()}`;
  }

  private async relist(): Promise<void> {
    const items: T[] = [];
    let next: string | undefined;
    let resourceVersion: string | undefined;
    do {
      const page = (await this.transport.call('GET', this.query({
        limit: String(this.options.pageSize ?? 500),
        ...(next ? { continue: next } : {}),
      }))) as ListPage;
      items.push(...((page.items ?? []) as T[]));
      next = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion;
    } while (next);
    const changes = this.store.replace(items);
    this.resourceVersion = resourceVersion;
    this.currentAt = performance.now();
    this.lists++;
    for (const obj of changes.added) this.emit((h) => h.added?.(obj));
    for (const { old, current } of changes.updated) this.emit((h) => h.updated?.(old, current));
    for (const obj of changes.deleted) this.emit((h) => h.deleted?.(obj));
    if (!this.synced) {
      this.synced = true;
      for (const waiter of this.syncWaiters.splice(0)) waiter();
    }
  }

  /**
   * One watch, until it ends; true if it delivered anything or lasted to near its timeout (a watch the server
   * serves from etcd sends no bookmarks: a quiet one that ends on time is no failure to back off from).
   */
  private async watch(signal: AbortSignal): Promise<boolean> {
    // An abort listener added to an already-aborted signal never fires: shutdown may come during the list.
    if (signal.aborted) return false;
    const minTimeout = this.options.minWatchTimeoutSeconds ?? 15;
    const timeoutSeconds = minTimeout + Math.floor(Math.random() * minTimeout);
    const abort = new AbortController();
    const stop = (): void => {
      abort.abort();
    };
    signal.addEventListener('abort', stop, { once: true });
    const stallMs = timeoutSeconds * 1000 + (this.options.stallGraceMs ?? 5000);
    const silent = (): void => {
      abort.abort(STALLED);
    };
    let watchdog = setTimeout(silent, stallMs);
    let progressed = false;
    const opened = performance.now();
    try {
      const res = await this.transport.stream(this.query({
        watch: '1',
        allowWatchBookmarks: 'true',
        resourceVersion: this.resourceVersion ?? '',
        timeoutSeconds: String(timeoutSeconds),
      }), abort.signal);
      for await (const line of lines(res)) {
        clearTimeout(watchdog);
        watchdog = setTimeout(silent, stallMs);
        if (line.trim() === '') continue;
        this.apply(JSON.parse(line) as WatchEvent);
        this.currentAt = performance.now();
        progressed = true;
      }
      // Served to its end by the server (its timeout): nothing was missed up to now.
      if (!abort.signal.aborted) this.currentAt = performance.now();
    } catch (err) {
      // An abort by the watchdog or by shutdown ends the watch like a server-side timeout would; a watch whose
      // answer never started is as silent as one that stopped (resumed, it would wait the same way again).
      if (err instanceof ApiTimeout) abort.abort(STALLED);
      else if (!abort.signal.aborted) throw err;
    } finally {
      clearTimeout(watchdog);
      signal.removeEventListener('abort', stop);
    }
    if (abort.signal.reason === STALLED) {
      // What a silent watch held back is unknown: only a fresh list tells (what changed meanwhile is emitted).
      this.stalls++;
      this.options.onError?.(new Error(`watch ${this.options.path} sent nothing for ${stallMs} ms, not even a bookmark; listing anew`));
      this.resourceVersion = undefined;
    }
    return progressed || performance.now() - opened >= timeoutSeconds * 500;
  }

  private apply(event: WatchEvent): void {
    const obj = event.object;
    if (event.type === 'ERROR') {
      if (obj.code === 410) throw new Expired(obj.message ?? 'resource version expired');
      throw new ApiError(obj.code ?? 0, obj.reason ?? '', `watch ${this.options.path}: ${obj.message ?? 'error event'}`);
    }
    this.resourceVersion = obj.metadata?.resourceVersion ?? this.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    const typed = obj as T;
    if (event.type === 'DELETED') {
      const old = this.store.remove(typed);
      this.emit((h) => h.deleted?.(old ?? typed));
      return;
    }
    const old = this.store.upsert(typed);
    if (old) this.emit((h) => h.updated?.(old, typed));
    else this.emit((h) => h.added?.(typed));
  }

  private emit(call: (h: ResourceHandler<T>) => void): void {
    for (const h of this.handlers) call(h);
  }
}

/**
 * Newline-delimited records of a stream. Built on the stream's own iterator, which ends or throws when the
 * response is aborted (node:readline's iterator can wait forever on an aborted response in Node 20).
 */
export async function* lines(stream: Readable): AsyncGenerator<string> {
  let pending = '';
  for await (const chunk of stream) {
    pending += (chunk as Buffer).toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      yield pending.slice(0, newline);
      pending = pending.slice(newline + 1);
    }
  }
  if (pending.trim() !== '') yield pending;
}

/** 200 ms doubling to 30 s, with ±50 % jitter so that many reflectors don't retry in step. */
function backoffMs(failures: number): number {
  const base = Math.min(200 * 2 ** Math.min(failures - 1, 10), 30_000);
  return base * (0.5 + Math.random());
}
