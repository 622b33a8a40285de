import { lastWrittenRevision, writtenEvent } from './history.js';
import type { Operation, WatchEvent } from './history.js';

/** What one watcher received: its events in order, and the revisions etcd said it had compacted when it resumed. */
export interface WatchRecord {
  events: WatchEvent[];
  /** A resumed watch etcd refused as compacted: the events it asked for, from..through, may be missing, legally. */
  compacted: { from: number; through: number }[];
  /** How many times the watch was cut and resumed from the revision after the last one it saw. */
  resumes: number;
}

/** Every value a client may have written to each key: answered or not, only a write refused before etcd had it is not. */
function writtenValues(operations: readonly Operation[]): Map<string, Set<string>> {
  const written = new Map<string, Set<string>>();
  for (const op of operations) {
    if ((op.input.f === 'put' || op.input.f === 'cas') && op.outcome.type !== 'fail') {
      written.set(op.input.key, (written.get(op.input.key) ?? new Set()).add(op.input.value));
    }
  }
  return written;
}

/**
 * Serializable reads answered with a value no client wrote to that key. They may be stale, so the linearizability
 * check leaves them out; a value nobody wrote is wrong whatever the staleness.
 */
export function unwrittenReads(operations: readonly Operation[]): string[] {
  const written = writtenValues(operations);
  return operations.flatMap((op) => (op.input.f === 'get' && op.input.serializable && op.outcome.type === 'ok'
    && typeof op.outcome.value === 'string' && !written.get(op.input.key)?.has(op.outcome.value)
    ? [`a serializable read of ${op.input.key} at revision ${op.outcome.revision} answered ${op.outcome.value}, a value no client wrote`]
    : []));
}

const same = (a: WatchEvent, b: WatchEvent): boolean => a.key === b.key && a.type === b.type && (a.value ?? null) === (b.value ?? null);

/**
 * Anomalies in what watchers received, against each other and the clients' history: an event delivered twice or
 * out of order; an event missing from a watcher that saw revisions on both sides of it (and no compaction
 * between): an acknowledged write, or what another watcher got (a delete, a write whose answer was lost); two
 * watchers told different things at one revision; a value no client ever wrote; a watcher that ended short of
 * the last acknowledged write (the recorder waits for them to catch up before it stops them). An empty answer is
 * a clean record.
 */
export function watchAnomalies(operations: readonly Operation[], watchers: readonly WatchRecord[]): string[] {
  const found: string[] = [];
  const written = writtenValues(operations);
  const deletedKeys = new Set(operations.filter((op) => op.input.f === 'delete' && op.outcome.type !== 'fail').map((op) => op.input.key));
  const acknowledged = operations.map(writtenEvent).filter((e): e is WatchEvent => e !== undefined);
  const lastAcknowledged = lastWrittenRevision(operations);
  const told = new Map<string, WatchEvent>();
  const seenBy = watchers.map((watcher, w) => {
    const seen = new Map<string, WatchEvent>();
    let last = 0;
    for (const e of watcher.events) {
      const id = `${e.revision}/${e.key}`;
      if (seen.has(id)) found.push(`watcher ${w}: revision ${e.revision} of ${e.key} delivered twice`);
      else if (e.revision < last) found.push(`watcher ${w}: revision ${e.revision} of ${e.key} after revision ${last}`);
      seen.set(id, e);
      last = Math.max(last, e.revision);
      if (e.type === 'put' && !written.get(e.key)?.has(e.value ?? '')) found.push(`watcher ${w}: ${e.key} = ${e.value ?? ''} at revision ${e.revision}, a value no client wrote`);
      if (e.type === 'delete' && !deletedKeys.has(e.key)) found.push(`watcher ${w}: ${e.key} deleted at revision ${e.revision}, a key no client deleted`);
      const other = told.get(id);
      if (other && !same(other, e)) found.push(`watcher ${w}: revision ${e.revision} of ${e.key} is ${JSON.stringify(e)} where another watcher got ${JSON.stringify(other)}`);
      told.set(id, e);
    }
    if (watcher.events.length > 0 && last < lastAcknowledged) found.push(`watcher ${w}: ended at revision ${last}, short of the last acknowledged write at ${lastAcknowledged}`);
    return { seen, first: watcher.events[0]?.revision ?? Infinity, last, compacted: watcher.compacted };
  });
  // Every event some watcher got, and every acknowledged write: each watcher must have those within its span.
  const expected = new Map<string, { event: WatchEvent; from: string }>([...told].map(([id, event]) => [id, { event, from: 'another watcher got' }]));
  for (const a of acknowledged) expected.set(`${a.revision}/${a.key}`, { event: a, from: 'the client wrote' });
  for (const [w, { seen, first, last, compacted }] of seenBy.entries()) {
    const excused = (r: number): boolean => compacted.some((c) => c.from <= r && r <= c.through);
    for (const [id, { event, from }] of expected) {
      // A revision's events come together, so the watcher's first and last revisions are compared too.
      if (event.revision < first || event.revision > last || excused(event.revision)) continue;
      const got = seen.get(id);
      if (!got) found.push(`watcher ${w}: ${event.type} of ${event.key}${event.value === undefined ? '' : ` = ${event.value}`} at revision ${event.revision} (${from} it) never came, between revisions ${first} and ${last}`);
      else if (!same(got, event)) found.push(`watcher ${w}: revision ${event.revision} of ${event.key} is ${JSON.stringify(got)} where ${from} ${event.value ?? 'a delete'}`);
    }
  }
  return found;
}
