import { keyAfter } from '../../etcd/client.js';
import type { TxnOp } from '../../etcd/client.js';
import type { ChangeEvent } from '../../etcd/watch-grpc.js';

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
