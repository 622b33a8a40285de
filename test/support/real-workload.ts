import { request } from 'node:http';
import { post } from './etcd-gateway.js';
import type { StoredKey } from './etcd-gateway.js';
import { UNSHIFTED, keyRevision } from '../../src/controllers/restore/bumped-revisions.js';
import { eventually } from './lab.js';

/**
 * etcd written the way its real clients write it (DESIGN §8; Kubernetes first): keys attached to short-TTL
 * leases shared by many keys, leases that expire or are revoked with hundreds of keys at one revision, prefix
 * deletes, guarded transactions (Kubernetes' GuaranteedUpdate: compare the mod revision read, then write), and
 * values near etcd's request limit. Everything goes through the v3 JSON gateway, one request per call.
 */

export const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
export const text = (s?: string): string => Buffer.from(s ?? '', 'base64').toString('utf8');
/** The end of the range of keys that start with `prefix`. */
export const prefixEnd = (prefix: string): string => {
  const end = Buffer.from(prefix, 'utf8');
  end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
  return end.toString('base64');
};

/** A new lease of `ttl` seconds; its ID is an int64, kept as etcd's decimal string. */
export async function leaseGrant(endpoint: string, ttl: number): Promise<string> {
  const res = (await post(endpoint, '/v3/lease/grant', { TTL: String(ttl) })) as { ID?: string };
  if (!res.ID) throw new Error(`lease grant answered no ID: ${JSON.stringify(res)}`);
  return res.ID;
}

export async function leaseKeepAlive(endpoint: string, id: string): Promise<void> {
  await post(endpoint, '/v3/lease/keepalive', { ID: id }, { timeoutMs: 2000 });
}

/** Puts every entry attached to the lease (none: `lease` '0'), in transactions of at most 100 puts; answers the last revision. */
export async function putAll(endpoint: string, entries: readonly [string, string][], lease = '0'): Promise<number> {
  let revision = 0;
  for (let i = 0; i < entries.length; i += 100) {
    const success = entries.slice(i, i + 100).map(([key, value]) => ({ request_put: { key: b64(key), value: b64(value), lease } }));
    const res = (await post(endpoint, '/v3/kv/txn', { success })) as { header?: { revision?: string } };
    revision = Number(res.header?.revision ?? 0);
  }
  return revision;
}

/** Deletes every key under `prefix` in one request (as Kubernetes does when a namespace goes); answers its revision and how many. */
export async function deletePrefix(endpoint: string, prefix: string): Promise<{ revision: number; deleted: number }> {
  const res = (await post(endpoint, '/v3/kv/deleterange', { key: b64(prefix), range_end: prefixEnd(prefix) })) as { header?: { revision?: string }; deleted?: string };
  return { revision: Number(res.header?.revision ?? 0), deleted: Number(res.deleted ?? 0) };
}

/** One transaction that deletes every key under each prefix and puts the entries (keys that sort among the deleted); answers its revision. */
export async function deleteAndPut(endpoint: string, prefixes: readonly string[], entries: readonly [string, string][]): Promise<number> {
  const success = [
    ...prefixes.map((p) => ({ request_delete_range: { key: b64(p), range_end: prefixEnd(p) } })),
    ...entries.map(([key, value]) => ({ request_put: { key: b64(key), value: b64(value) } })),
  ];
  const res = (await post(endpoint, '/v3/kv/txn', { success })) as { header?: { revision?: string } };
  return Number(res.header?.revision ?? 0);
}

/**
 * Kubernetes' GuaranteedUpdate: reads the key, then writes `next(old)` (and, with `alsoPut`, more keys in the same
 * transaction) only if nobody wrote the key since; tries again on a conflict. Answers the revision written.
 */
export async function guardedUpdate(endpoint: string, key: string, next: (old: string | undefined) => string, alsoPut: [string, string][] = []): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const read = (await post(endpoint, '/v3/kv/range', { key: b64(key) })) as { kvs?: { value?: string; mod_revision?: string }[] };
    const kv = read.kvs?.[0];
    const compare = [{ key: b64(key), target: 'MOD', result: 'EQUAL', mod_revision: kv?.mod_revision ?? '0' }];
    const success = [[key, next(kv ? text(kv.value) : undefined)] as [string, string], ...alsoPut]
      .map(([k, v]) => ({ request_put: { key: b64(k), value: b64(v) } }));
    const res = (await post(endpoint, '/v3/kv/txn', { compare, success, failure: [] })) as { succeeded?: boolean; header?: { revision?: string } };
    if (res.succeeded) return Number(res.header?.revision ?? 0);
  }
  throw new Error(`${key}: 20 conflicting updates in a row`);
}

/** A value of `bytes` bytes that differs with `seed` (as a large ConfigMap would). */
export const bigValue = (bytes: number, seed: string): string => `${seed}:`.padEnd(bytes, seed.slice(-1) || 'x');

/** A key as the model holds it at a revision. */
export interface ModelKey { value: string; lease: string; createRevision: number; modRevision: number; version: number }

/**
 * A recorded model of the source: every event etcd sent on a watch of the whole key space from revision 1
 * (through the gateway's watch, not the operator's own watch code), so the store can be rebuilt as it was at any
 * revision, also after the source has compacted its history.
 */
export interface SourceModel {
  /** The key space as it was at `revision`, by key. */
  at(revision: number): Map<string, ModelKey>;
  /** The revisions seen, with their events, in order. */
  revisions(): readonly { revision: number; puts: string[]; deletes: string[] }[];
  /** Resolves once every revision through `revision` has been received. */
  through(revision: number, timeoutMs?: number): Promise<void>;
  stop(): void;
}

interface GatewayEvent { type?: string; kv?: { key?: string; value?: string; lease?: string; create_revision?: string; mod_revision?: string; version?: string } }

export function recordSource(endpoint: string): SourceModel {
  const log: { revision: number; events: { key: string; put?: ModelKey }[] }[] = [];
  let failure: Error | undefined;
  const body = JSON.stringify({ create_request: { key: 'AA==', range_end: 'AA==', start_revision: '1' } });
  const req = request(new URL('/v3/watch', endpoint), { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
    let pending = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      pending += chunk;
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (!line) continue;
        const { result } = JSON.parse(line) as { result?: { events?: GatewayEvent[]; canceled?: boolean; cancel_reason?: string } };
        if (result?.canceled) failure = new Error(`the model's watch was canceled: ${result.cancel_reason ?? ''}`);
        for (const e of result?.events ?? []) {
          const kv = e.kv ?? {};
          const revision = Number(kv.mod_revision ?? 0);
          const key = text(kv.key);
          const put = e.type === 'DELETE' ? undefined : {
            value: text(kv.value), lease: kv.lease ?? '0', createRevision: Number(kv.create_revision ?? 0), modRevision: revision, version: Number(kv.version ?? 0),
          };
          const last = log[log.length - 1];
          if (last?.revision === revision) last.events.push({ key, ...(put ? { put } : {}) });
          else log.push({ revision, events: [{ key, ...(put ? { put } : {}) }] });
        }
      }
    });
    res.on('error', (err) => { failure ??= err; });
  });
  req.on('error', (err) => { failure ??= err; });
  req.end(body);
  const last = (): number => log[log.length - 1]?.revision ?? 0;
  return {
    at: (revision) => {
      const keys = new Map<string, ModelKey>();
      for (const r of log) {
        if (r.revision > revision) break;
        for (const e of r.events) {
          if (e.put) keys.set(e.key, e.put);
          else keys.delete(e.key);
        }
      }
      return keys;
    },
    revisions: () => log.map((r) => ({ revision: r.revision, puts: r.events.filter((e) => e.put).map((e) => e.key), deletes: r.events.filter((e) => !e.put).map((e) => e.key) })),
    through: async (revision, timeoutMs = 30_000) => {
      await eventually(`the model through revision ${revision}`, timeoutMs, () => {
        if (failure) return Promise.reject(failure);
        return Promise.resolve(last() >= revision ? true : undefined);
      });
    },
    stop: () => { req.destroy(); },
  };
}

/** Keys attached to one lease, kept alive by a loop of keep-alives until let go (then etcd expires it with all of them). */
export interface LeasedKeys {
  id: string;
  /** The revision of the last put. */
  revision: number;
  /** Stops the keep-alives: the lease expires within its TTL. */
  letExpire(): void;
}

/** Grants a lease of `ttl` s, puts the entries attached to it, and keeps it alive (at a third of its TTL) until let go. */
export async function leasedKeys(endpoint: string, ttl: number, entries: readonly [string, string][]): Promise<LeasedKeys> {
  const id = await leaseGrant(endpoint, ttl);
  const revision = await putAll(endpoint, entries, id);
  const timer = setInterval(() => { leaseKeepAlive(endpoint, id).catch(() => undefined); }, (ttl * 1000) / 3);
  return { id, revision, letExpire: () => { clearInterval(timer); } };
}

/** Concurrent clients, as a control plane keeps them going; stop() ends them and answers how many writes each made. */
export interface Clients { stop(): Promise<Record<string, number>> }

/**
 * Three clients until stopped: guarded updates of a few shared keys (two of them race on the same keys, as
 * controllers do), and an event writer that attaches each new event key to the lease of the current minute
 * (here: a 6 s lease granted every 3 s, shared by every event written meanwhile).
 */
export function startClients(endpoint: string, prefix: string): Clients {
  const running = { on: true };
  const counts: Record<string, number> = { updaterA: 0, updaterB: 0, events: 0 };
  const updater = async (name: string): Promise<void> => {
    for (let n = 0; running.on; n++) {
      await guardedUpdate(endpoint, `${prefix}shared/${n % 5}`, (old) => `${name}-${n}-after-${(old ?? '').slice(0, 20)}`).then(() => { counts[name] = (counts[name] ?? 0) + 1; }, () => undefined);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const events = async (): Promise<void> => {
    let lease = '0';
    let grantedAt = 0;
    for (let n = 0; running.on; n++) {
      try {
        if (Date.now() - grantedAt > 3000) {
          lease = await leaseGrant(endpoint, 6);
          grantedAt = Date.now();
        }
        await putAll(endpoint, [[`${prefix}events/e-${String(n).padStart(5, '0')}`, `event ${n}`]], lease);
        counts.events = (counts.events ?? 0) + 1;
      } catch {
        // A refused write is the cluster's business; the model records only what etcd wrote.
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const done = Promise.all([updater('updaterA'), updater('updaterB'), events()]);
  return { stop: async () => { running.on = false; await done; return counts; } };
}

/**
 * The model's key space at `revision` as a range of the restored store answers it (lease left out: a replayed key
 * keeps no lease); with a revision bump, a key written after the snapshot's revision `held` carries its revision raised.
 */
export const modelKeys = (model: SourceModel, revision: number, shift = UNSHIFTED): StoredKey[] => [...model.at(revision)]
  .map(([key, k]) => ({ key, value: k.value, createRevision: keyRevision(shift, k.createRevision), modRevision: keyRevision(shift, k.modRevision), version: k.version }))
  .sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));

/** The first key where two key spaces differ, said plainly (a deepEqual of thousands of keys prints too much). */
export function firstDifference(held: StoredKey[], want: StoredKey[]): string | undefined {
  const byKey = new Map(held.map((k) => [k.key, k]));
  for (const w of want) {
    const h = byKey.get(w.key);
    if (!h) return `${w.key} missing (source: rev ${w.modRevision})`;
    if (JSON.stringify(h) !== JSON.stringify(w)) return `${w.key}: ${JSON.stringify({ ...h, value: h.value.slice(0, 40) })} where the source had ${JSON.stringify({ ...w, value: w.value.slice(0, 40) })}`;
    byKey.delete(w.key);
  }
  const extra = [...byKey.keys()];
  return extra.length ? `${extra.length} keys the source did not have, e.g. ${extra[0] ?? ''}` : undefined;
}
