import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

export interface CallOptions {
  lookup?: LookupFunction;
  timeoutMs?: number;
  /** A new connection for the call, as a client that fails over would open after an error. */
  fresh?: boolean;
  /** For https endpoints: the CA to trust, the client certificate (if any), and the name to check the server's against. */
  tls?: { ca: string; cert?: string; key?: string; servername?: string };
}

/** One call to etcd's v3 JSON gateway (`POST /v3/...`), the way any HTTP client would talk to etcd. */
export function post(endpoint: string, path: string, body: unknown, options: CallOptions | LookupFunction = {}): Promise<unknown> {
  const { lookup, timeoutMs = 5000, fresh = false, tls } = typeof options === 'function' ? { lookup: options } : options;
  const url = new URL(path, endpoint);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', lookup, timeout: timeoutMs, ...(fresh || tls ? { agent: false } : {}), ...tls, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`${url.href}: HTTP ${res.statusCode}: ${text}`));
          else {
            try {
              resolve(JSON.parse(text));
            } catch {
              reject(new Error(`${url.href}: an answer that is not JSON: ${text.slice(0, 200)}`));
            }
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url.href}: timed out`)));
    req.on('error', reject);
    // A connection closed cleanly in the middle of the answer ends no response and raises no error: without this
    // the call would wait for ever. (After an answer, the rejection is a no-op.)
    req.on('close', () => { reject(new Error(`${url.href}: the connection closed before the answer ended`)); });
    req.end(payload);
  });
}

/** Answers the revision of the write. */
export async function etcdPut(endpoint: string, key: string, value: string, options?: CallOptions | LookupFunction): Promise<number> {
  const res = (await post(endpoint, '/v3/kv/put', { key: b64(key), value: b64(value) }, options)) as { header?: { revision?: string } };
  return Number(res.header?.revision ?? 0);
}

export async function etcdGet(endpoint: string, key: string, options?: CallOptions | LookupFunction): Promise<string | undefined> {
  const res = (await post(endpoint, '/v3/kv/range', { key: b64(key) }, options)) as { kvs?: { value?: string }[] };
  const value = res.kvs?.[0]?.value;
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

/** The end of a prefix's range, base64 as the gateway takes it: the prefix with its last byte one higher. */
function prefixEnd(prefix: string): string {
  const end = Buffer.from(prefix, 'utf8');
  end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
  return end.toString('base64');
}

/** Every key under a prefix with its value, in one range request. */
export async function etcdGetPrefix(endpoint: string, prefix: string, options?: CallOptions | LookupFunction): Promise<Map<string, string>> {
  const res = (await post(endpoint, '/v3/kv/range', { key: b64(prefix), range_end: prefixEnd(prefix) }, options)) as {
    kvs?: { key?: string; value?: string }[];
  };
  const decode = (s?: string): string => Buffer.from(s ?? '', 'base64').toString('utf8');
  return new Map((res.kvs ?? []).map((kv) => [decode(kv.key), decode(kv.value)]));
}

/** Deletes every key under a prefix in one request (what etcd still accepts past its quota); answers how many it deleted. */
export async function etcdDeletePrefix(endpoint: string, prefix: string, options?: CallOptions | LookupFunction): Promise<number> {
  const res = (await post(endpoint, '/v3/kv/deleterange', { key: b64(prefix), range_end: prefixEnd(prefix) }, options)) as { deleted?: string };
  return Number(res.deleted ?? 0);
}

/** Many puts in transactions of `batch` (etcd allows 128 operations in one by default). */
export async function etcdPutMany(endpoint: string, entries: [string, string][], options?: CallOptions, batch = 100): Promise<void> {
  for (let i = 0; i < entries.length; i += batch) {
    const success = entries.slice(i, i + batch).map(([key, value]) => ({ request_put: { key: b64(key), value: b64(value) } }));
    await post(endpoint, '/v3/kv/txn', { success }, options);
  }
}

/** A key as etcd stores it, with its history fields: two stores hold the same data when these all match. */
export interface StoredKey { key: string; value: string; createRevision: number; modRevision: number; version: number }

/** Every key in the store (at `revision`, when given: the store as it was then), in key order. */
export async function etcdRangeAll(endpoint: string, revision?: number, options?: CallOptions): Promise<{ revision: number; kvs: StoredKey[] }> {
  const res = (await post(endpoint, '/v3/kv/range', { key: 'AA==', range_end: 'AA==', ...(revision ? { revision: String(revision) } : {}) }, options)) as {
    header?: { revision?: string }; kvs?: { key?: string; value?: string; create_revision?: string; mod_revision?: string; version?: string }[];
  };
  const decode = (s?: string): string => Buffer.from(s ?? '', 'base64').toString('utf8');
  return {
    revision: Number(res.header?.revision ?? 0),
    kvs: (res.kvs ?? []).map((kv) => ({
      key: decode(kv.key), value: decode(kv.value), createRevision: Number(kv.create_revision ?? 0), modRevision: Number(kv.mod_revision ?? 0), version: Number(kv.version ?? 0),
    })),
  };
}

/** Compacts the store's history up to `revision`. */
export async function etcdCompact(endpoint: string, revision: number, options?: CallOptions): Promise<void> {
  await post(endpoint, '/v3/kv/compaction', { revision: String(revision), physical: true }, options);
}

/** The member's id, the leader's id and its revision, as it reports them. */
export async function etcdStatus(endpoint: string, options?: CallOptions): Promise<{ memberId: string; leaderId: string; revision: number }> {
  const res = (await post(endpoint, '/v3/maintenance/status', {}, options)) as { header?: { member_id?: string; revision?: string }; leader?: string };
  return { memberId: res.header?.member_id ?? '', leaderId: res.leader ?? '', revision: Number(res.header?.revision ?? 0) };
}

/** Asks the leader (`endpoint` must be it) to hand leadership to `targetId`. */
export async function etcdMoveLeader(endpoint: string, targetId: string, options?: CallOptions): Promise<void> {
  await post(endpoint, '/v3/maintenance/transfer-leadership', { targetID: targetId }, options);
}
