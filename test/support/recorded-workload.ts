import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { post } from './etcd-gateway.js';
import { b64, prefixEnd, text } from './real-workload.js';
import { lastWrittenRevision } from './history.js';
import type { History, Input, Operation, Outcome, WatchEvent } from './history.js';
import type { WatchRecord } from './watch-checks.js';

/**
 * Concurrent clients of etcd recorded the way Jepsen and etcd's robustness tests record them (issue 34): a few
 * clients doing linearizable reads, serializable reads (marked: they may be stale), puts, deletes and
 * compare-and-sets over a small set of keys, every operation with its invocation and completion times and its
 * outcome; and watchers of those keys that record every event, resuming after a cut from the revision after the
 * last one seen. The history is for the linearizability checker, the watches for watchAnomalies.
 */
export interface RecordedWorkload {
  /** Stops the clients and watchers and answers what they recorded. */
  stop(): Promise<Recording>;
}

export interface Recording {
  history: History;
  watchers: WatchRecord[];
}

export interface WorkloadOptions {
  clients?: number;
  watchers?: number;
  keys?: number;
  /** Every key starts with it; by default one of the workload's own, so that each starts from absent keys as the checker's model does. */
  prefix?: string;
  /**
   * A client's pause between operations, ms (default 120: some 20 operations a second of 3 clients, hundreds in a
   * fault's minute; CI's two cores are what every test shares).
   */
  pauseMs?: number;
  /** A call without an answer this long is cut: its outcome is unknown. */
  timeoutMs?: number;
}

/** Refused before etcd had the request: nothing was sent, so nothing took effect. */
const NOT_SENT = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN/;

interface Answer { header?: { revision?: string }; kvs?: { value?: string }[]; succeeded?: boolean; deleted?: string }

/** One operation as the gateway is asked for it, and what its answer means. */
function request_(input: Input): { path: string; body: unknown; read: (a: Answer) => Omit<Extract<Outcome, { type: 'ok' }>, 'type' | 'revision'> } {
  const key = b64(input.key);
  switch (input.f) {
    case 'get':
      return { path: '/v3/kv/range', body: { key, ...(input.serializable ? { serializable: true } : {}) }, read: (a) => ({ value: a.kvs?.[0] ? text(a.kvs[0].value) : null }) };
    case 'put':
      return { path: '/v3/kv/put', body: { key, value: b64(input.value) }, read: () => ({}) };
    case 'delete':
      return { path: '/v3/kv/deleterange', body: { key }, read: (a) => ({ deleted: Number(a.deleted ?? 0) }) };
    case 'cas': {
      const compare = input.expect === null
        ? { key, target: 'VERSION', result: 'EQUAL', version: '0' }
        : { key, target: 'VALUE', result: 'EQUAL', value: b64(input.expect) };
      return { path: '/v3/kv/txn', body: { compare: [compare], success: [{ request_put: { key, value: b64(input.value) } }], failure: [] }, read: (a) => ({ succeeded: a.succeeded === true }) };
    }
  }
}

/** A small deterministic generator per client, so that a failing run's workload can be told apart from chance. */
function random(seed: number): () => number {
  let x = seed * 2654435761 + 1;
  return () => {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/**
 * Starts the workload against `endpoint` (a client Service), or against several members at once: each operation
 * then goes to one of them at random, and watcher w to member w (a test that splits a cluster sends clients to
 * both sides).
 */
export function startRecordedWorkload(endpoint: string | readonly string[], options: WorkloadOptions = {}): RecordedWorkload {
  const endpoints = typeof endpoint === 'string' ? [endpoint] : endpoint;
  const { clients = 3, watchers = 2, keys = 24, prefix = `lin-${randomUUID().slice(0, 8)}/`, pauseMs = 120, timeoutMs = 2000 } = options;
  const started = process.hrtime.bigint();
  const now = (): number => Number(process.hrtime.bigint() - started);
  const operations: Operation[] = [];
  /** Clients stop first; watchers once they have caught up with the clients' last write. */
  const running = { clients: true, watchers: true };

  const client = async (id: number): Promise<void> => {
    const next = random(id + 1);
    /** What this client last saw in each key: a compare-and-set expects it, as Kubernetes' GuaranteedUpdate does. */
    const lastSeen = new Map<string, string | null>();
    for (let n = 0; running.clients; n++) {
      const key = `${prefix}${Math.floor(next() * keys)}`;
      const value = `c${id}-${n}`;
      const roll = next();
      const input: Input = roll < 0.35 ? { f: 'get', key }
        : roll < 0.45 ? { f: 'get', key, serializable: true }
          : roll < 0.65 ? { f: 'put', key, value }
            : roll < 0.72 ? { f: 'delete', key }
              : { f: 'cas', key, expect: lastSeen.get(key) ?? null, value };
      const { path, body, read } = request_(input);
      const call = now();
      let outcome: Outcome;
      try {
        const answer = (await post(endpoints[Math.floor(next() * endpoints.length)] ?? '', path, body, { timeoutMs, fresh: true })) as Answer;
        outcome = { type: 'ok', ...read(answer), revision: Number(answer.header?.revision ?? 0) };
      } catch (err) {
        const error = (err as Error).message;
        outcome = NOT_SENT.test(`${(err as NodeJS.ErrnoException).code ?? ''} ${error}`) ? { type: 'fail', error } : { type: 'unknown', error };
      }
      const returned = outcome.type === 'unknown' ? null : now();
      operations.push({ client: id, input, call, return: returned, outcome });
      if (outcome.type === 'ok') {
        if (input.f === 'get') lastSeen.set(key, outcome.value ?? null);
        else if (input.f === 'put' || (input.f === 'cas' && outcome.succeeded)) lastSeen.set(key, input.value);
        else if (input.f === 'delete') lastSeen.set(key, null);
      }
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  };

  /** The cuts of the watches open now: stop() ends them. */
  const cuts = new Set<() => void>();
  const watcher = async (record: WatchRecord, w: number): Promise<void> => {
    const endpoint = endpoints[w % endpoints.length] ?? '';
    let from = 0;
    const stopped = (): boolean => !running.watchers;
    while (running.watchers) {
      const last = await watchOnce(endpoint, prefix, from, record, cuts);
      if (last > 0) from = last + 1;
      if (stopped()) break;
      record.resumes++;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const records: WatchRecord[] = Array.from({ length: watchers }, () => ({ events: [], compacted: [], resumes: 0 }));
  const clientsDone = Promise.all(Array.from({ length: clients }, (_, i) => client(i)));
  const watchersDone = Promise.all(records.map((r, w) => watcher(r, w)));
  return {
    stop: async () => {
      running.clients = false;
      await clientsDone;
      await caughtUp(records, operations);
      running.watchers = false;
      cuts.forEach((cut) => { cut(); });
      await watchersDone;
      return { history: { operations }, watchers: records };
    },
  };
}

/** How long stop() waits for the watchers to reach the clients' last acknowledged write (a slow member's watch lags). */
const CATCH_UP_MS = 15_000;

/** Resolves once every watcher that saw anything has reached the last acknowledged write, or after CATCH_UP_MS. */
async function caughtUp(records: readonly WatchRecord[], operations: readonly Operation[]): Promise<void> {
  const target = lastWrittenRevision(operations);
  const deadline = Date.now() + CATCH_UP_MS;
  const behind = (): boolean => records.some((r) => r.events.length > 0 && (r.events[r.events.length - 1]?.revision ?? 0) < target);
  while (behind() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

/**
 * A watch that hears nothing this long while the clients write is cut and resumed (through the Service, so most
 * likely on another member): a member killed or cut off holds its watches open and silent.
 */
const SILENT_MS = 5000;

/**
 * One watch of the prefix from `from` (0: from now), recording into `record` until the stream ends, is cut or
 * falls silent; answers the last revision it saw (0: none). A watch etcd refuses as compacted records the
 * revisions it may have missed and moves on past the compaction.
 */
function watchOnce(endpoint: string, prefix: string, from: number, record: WatchRecord, cuts: Set<() => void>): Promise<number> {
  return new Promise((resolve) => {
    let last = from > 0 ? from - 1 : 0;
    const body = JSON.stringify({ create_request: { key: b64(prefix), range_end: prefixEnd(prefix), ...(from > 0 ? { start_revision: String(from) } : {}) } });
    const req = request(new URL('/v3/watch', endpoint), { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        quiet.refresh();
        pending += chunk;
        let newline: number;
        while ((newline = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, newline).trim();
          pending = pending.slice(newline + 1);
          if (line) last = take(line, last, record, cut);
        }
      });
    });
    const cut = (): void => { req.destroy(); };
    const quiet = setTimeout(cut, SILENT_MS);
    cuts.add(cut);
    req.on('close', () => { clearTimeout(quiet); cuts.delete(cut); resolve(last); });
    // A refused or reset connection ends the same way: resumed from what was seen.
    req.on('error', () => undefined);
    req.end(body);
  });
}

/** Records one line of a watch's stream; answers the last revision seen after it. */
function take(line: string, last: number, record: WatchRecord, cut: () => void): number {
  const { result } = parseLine(line) as { result?: { events?: { type?: string; kv?: { key?: string; value?: string; mod_revision?: string } }[]; canceled?: boolean; compact_revision?: string } };
  if (result?.canceled) {
    cut();
    if (!result.compact_revision) return last;
    // Resumed from `compact_revision`, the oldest etcd still has: what lay between the last event seen and it is legally missed.
    const compacted = Number(result.compact_revision);
    record.compacted.push({ from: last + 1, through: compacted - 1 });
    return compacted - 1;
  }
  let seen = last;
  for (const e of result?.events ?? []) {
    const event: WatchEvent = { revision: Number(e.kv?.mod_revision ?? 0), key: text(e.kv?.key), type: e.type === 'DELETE' ? 'delete' : 'put', ...(e.type === 'DELETE' ? {} : { value: text(e.kv?.value) }) };
    record.events.push(event);
    seen = event.revision;
  }
  return seen;
}

/** A line of a watch's stream as JSON; a line that is not (a proxy's error page) counts as none. */
function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return {};
  }
}
