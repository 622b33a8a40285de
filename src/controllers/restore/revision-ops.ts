import { keyAfter } from '../../etcd/client.js';
import type { TxnCompare, TxnOp } from '../../etcd/client.js';
import type { ChangeEvent } from '../../etcd/watch-grpc.js';
import { keyRevision } from './bumped-revisions.js';
import type { RevisionShift } from './bumped-revisions.js';

/** etcd's default `--max-txn-ops`: a transaction with more operations is refused. */
export const MAX_TXN_OPS = 128;


/**
 * Runs of `deleted` keys with no other key between them, each as one ranged delete: a prefix delete or a lease
 * revoke of hundreds of keys becomes a few operations that delete exactly those keys. `present` is every key the
 * store holds from the first deleted key to the last, and `written` the keys the same transaction puts (a key it
 * creates is not in the store yet, and a range over it would be refused as a duplicate, or delete it): both end a
 * run. A deleted key the store does not hold is answered as `missing`, since the store then differs from the source.
 */
export function deleteRuns(deleted: readonly Buffer[], present: readonly Buffer[], written: readonly Buffer[] = []): { runs: TxnOp[] } | { missing: Buffer } {
  const gone = new Set(deleted.map((k) => k.toString('hex')));
  const held = new Set(present.map((k) => k.toString('hex')));
  const missing = deleted.find((k) => !held.has(k.toString('hex')));
  if (missing) return { missing };
  const runs: TxnOp[] = [];
  let first: Buffer | undefined;
  let last: Buffer | undefined;
  const close = (): void => {
    if (first && last) runs.push(first.equals(last) ? { type: 'delete', key: first } : { type: 'delete', key: first, rangeEnd: keyAfter(last) });
    first = last = undefined;
  };
  const created = written.filter((k) => !held.has(k.toString('hex')));
  for (const key of [...present, ...created].sort((a, b) => Buffer.compare(a, b))) {
    if (!gone.has(key.toString('hex'))) {
      close();
      continue;
    }
    first ??= key;
    last = key;
  }
  close();
  return { runs };
}

/** The operations of a revision, one per event, as etcd wrote them: a key appears once in a transaction, so order does not matter. */
export const eventOps = (events: readonly ChangeEvent[]): TxnOp[] =>
  events.map((e) => (e.type === 'put' ? { type: 'put', key: e.key, value: e.value } : { type: 'delete', key: e.key }));

/** Holds while `e` is not yet in the store: a put's key not yet modified at `at`, a deleted key still there. */
const notYet = (e: ChangeEvent, at: number): TxnCompare => (e.type === 'put'
  ? { key: e.key, target: 'MOD', result: 'LESS', value: at }
  : { key: e.key, target: 'VERSION', result: 'GREATER', value: 0 });

/** Holds once `e` is in the store: a put's key last modified at `at`, a deleted key gone. */
const done = (e: ChangeEvent, at: number): TxnCompare => (e.type === 'put'
  ? { key: e.key, target: 'MOD', result: 'EQUAL', value: at }
  : { key: e.key, target: 'VERSION', result: 'EQUAL', value: 0 });

/** A source revision as the change log holds it. */
export interface LoggedRevision {
  revision: number;
  events: readonly ChangeEvent[];
}

/**
 * Whether a revision can be sent before the one before it (`previous`) is answered: only when that one puts a key.
 * A deleted key is absent before it was made too, so no comparison tells the store a delete left from one earlier.
 */
export const sendsAfter = (previous: LoggedRevision): boolean => previous.events.some((e) => e.type === 'put');

/**
 * The comparisons that let the source's revision `revision` be written only right after the one before it and
 * only once: this one's first write is not in the store, and the one before it (`previous`: none for the first of a
 * pass, whose predecessor the store was just read at) is, a put of it if it has one. Transactions sent together
 * may reach etcd out of order, and one whose answer was lost may land later: the guard refuses both, where without
 * it the store would get a revision in the wrong place or twice. (After a revision that only deletes, the next is
 * sent once that one is answered: see sendsAfter.)
 */
export function revisionGuard(shift: RevisionShift, revision: number, events: readonly ChangeEvent[], previous?: LoggedRevision): TxnCompare[] {
  const guard: TxnCompare[] = [];
  const own = events[0];
  if (own) guard.push(notYet(own, keyRevision(shift, revision)));
  const before = previous?.events.find((e) => e.type === 'put') ?? previous?.events[0];
  if (previous && before) guard.push(done(before, keyRevision(shift, previous.revision)));
  return guard;
}
