import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { lookup as dnsLookup } from 'node:dns';
import type { SecureContextOptions } from 'node:tls';
import { memberOfPeerUrl } from './identity.js';
import { resolveHost } from './dns-lookup.js';
import type { GrpcSnapshotOptions } from './snapshot-grpc.js';
import { grpcWatch } from './watch-grpc.js';
import type { WatchStream } from './watch-grpc.js';
import { EtcdError } from './etcd-error.js';

export { EtcdError };

/** A member as etcd lists it. IDs are uint64, carried as decimal strings. */
export interface EtcdMember {
  id: string;
  /** Empty until the member has started. */
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

export interface EtcdStatus {
  memberId: string;
  leaderId: string;
  raftIndex: number;
  raftTerm: number;
  /** The store's revision as this member has applied it. */
  revision: number;
  dbSize: number;
  dbSizeInUse: number;
  version: string;
  isLearner: boolean;
  errors: string[];
  /** The version of its database's format (etcd 3.6 on; '' before): a lower minor than it runs during a downgrade. */
  storageVersion: string;
  /** The minor a downgrade under way takes the cluster to (etcd 3.6 on), '' when none is. */
  downgradeTarget: string;
}


export interface EtcdClientOptions {
  /** Resolves member host names (a host-run operator resolves pod names through the cluster DNS). */
  lookup?: LookupFunction;
  tls?: SecureContextOptions;
  timeoutMs?: number;
  /** Every call is abandoned once this aborts: a leadership term's work ends with the term. */
  signal?: AbortSignal;
}

/** Bounds of one call, beside the client's own timeout. */
export interface CallBounds {
  /**
   * The connection must be made within this (a kept one counts as made): a new address's SYN the network dropped
   * is sent again only a second later, and a new connection may well be routed by then.
   */
  connectWithinMs?: number;
}

interface RawMember { ID?: string; name?: string; peerURLs?: string[]; clientURLs?: string[]; isLearner?: boolean }
export interface MemberHash {
  hash: number;
  /** The compaction the hash starts from: hashes compare only between members at the same one. */
  compactRevision: number;
  hashRevision: number;
}

/** A key as a range answers it (lease left out: a restored store's leases differ). */
export interface StoredKeyValue { key: Buffer; value: Buffer; createRevision: number; modRevision: number; version: number }

/**
 * An operation of a transaction: a put of a key, or a delete of every key in [key, rangeEnd) (rangeEnd absent:
 * the key alone).
 */
export type TxnOp =
  | { type: 'put'; key: Buffer; value: Buffer }
  | { type: 'delete'; key: Buffer; rangeEnd?: Buffer };

/** A comparison a transaction makes before it writes: a key's modification revision or its version (0: absent). */
export interface TxnCompare {
  key: Buffer;
  target: 'MOD' | 'VERSION';
  result: 'EQUAL' | 'LESS' | 'GREATER';
  value: number;
}

/**
 * How long a member may send nothing while a snapshot waits on it. etcd streams from a read transaction as fast as
 * it is read, so half a minute of silence is a member frozen or cut off, not a large database.
 */
const SNAPSHOT_STALL_MS = 30_000;

/** The first key after `key` in etcd's byte order: [key, keyAfter(key)) holds `key` alone. */
export const keyAfter = (key: Buffer): Buffer => Buffer.concat([key, Buffer.from([0])]);

/**
 * How long a connection to a member's address stays open unused. Node's default (5 s) is shorter than a healthy
 * cluster's periodic look (every 30 s; 10 s while a member does not answer), so each look connected anew and
 * (https) shook hands again. A kept connection whose member has gone fails its next call like a new one would
 * (reset, or no answer within the call's timeout), and is then closed.
 */
export const IDLE_CONNECTION_MS = 60_000;

/**
 * The snapshot stream, its module (and Node's HTTP/2 with it, some 2 MiB of an idle operator's memory) loaded when
 * the first snapshot is taken: most operators take none for long, many never (issue 36).
 */
async function* snapshotOver(endpoint: string, o: GrpcSnapshotOptions): AsyncIterable<Buffer> {
  const { grpcSnapshot } = await import('./snapshot-grpc.js');
  yield* grpcSnapshot(endpoint, o);
}

/** Keys read per request when listing a span of keys. */
const KEY_PAGE = 1000;

export type AlarmType = 'NOSPACE' | 'CORRUPT';

export interface Alarm {
  memberId: string;
  alarm: AlarmType;
}

interface RawStatus {
  header?: { member_id?: string; revision?: string };
  leader?: string; raftIndex?: string; raftTerm?: string; dbSize?: string; dbSizeInUse?: string;
  version?: string; isLearner?: boolean; errors?: string[];
  storageVersion?: string; downgradeInfo?: { enabled?: boolean; targetVersion?: string };
}

const toMember = (m: RawMember): EtcdMember => ({
  id: m.ID ?? '', name: m.name ?? '', peerURLs: m.peerURLs ?? [], clientURLs: m.clientURLs ?? [], isLearner: m.isLearner ?? false,
});

/** The member a listed entry stands for: its own name once started, else the name in its peer URL. */
export const memberName = (m: EtcdMember): string => m.name || memberOfPeerUrl(m.peerURLs[0] ?? '') || m.id;

/**
 * etcd's cluster and maintenance API through its v3 JSON gateway, one call per request to one endpoint.
 * No retries here: the planner decides what to try next from what it observes.
 */
export class EtcdClient {
  private readonly agents = {
    http: new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
    https: new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  };

  constructor(private readonly options: EtcdClientOptions = {}) {}

  /**
   * The member list as `endpoint` knows it; `linearizable` (etcd 3.5 and later) makes it confirm with the leader
   * first, so that a member cut off from the others cannot answer with a list the cluster has moved past.
   */
  async memberList(endpoint: string, linearizable = false): Promise<EtcdMember[]> {
    const res = (await this.call(endpoint, '/v3/cluster/member/list', linearizable ? { linearizable } : {})) as { members?: RawMember[] };
    return (res.members ?? []).map(toMember);
  }

  async memberAdd(endpoint: string, peerURL: string, isLearner: boolean): Promise<EtcdMember> {
    const res = (await this.call(endpoint, '/v3/cluster/member/add', { peerURLs: [peerURL], isLearner })) as { member?: RawMember };
    if (!res.member) throw new EtcdError(endpoint, 'member add answered without the member');
    return toMember(res.member);
  }

  async memberRemove(endpoint: string, id: string): Promise<void> {
    await this.call(endpoint, '/v3/cluster/member/remove', { ID: id });
  }

  async memberPromote(endpoint: string, id: string): Promise<void> {
    await this.call(endpoint, '/v3/cluster/member/promote', { ID: id });
  }

  /** Must be sent to the current leader. */
  async moveLeader(endpoint: string, targetId: string): Promise<void> {
    await this.call(endpoint, '/v3/maintenance/transfer-leadership', { targetID: targetId });
  }

  async status(endpoint: string, bounds: CallBounds = {}): Promise<EtcdStatus> {
    const s = (await this.call(endpoint, '/v3/maintenance/status', {}, undefined, bounds)) as RawStatus;
    return {
      memberId: s.header?.member_id ?? '', leaderId: s.leader ?? '', raftIndex: Number(s.raftIndex ?? 0), raftTerm: Number(s.raftTerm ?? 0),
      revision: Number(s.header?.revision ?? 0),
      dbSize: Number(s.dbSize ?? 0), dbSizeInUse: Number(s.dbSizeInUse ?? 0), version: s.version ?? '',
      isLearner: s.isLearner ?? false, errors: s.errors ?? [],
      storageVersion: s.storageVersion ?? '', downgradeTarget: s.downgradeInfo?.enabled ? s.downgradeInfo.targetVersion ?? '' : '',
    };
  }

  /**
   * Asks etcd (3.6 on) to take the cluster one minor down: it checks the target, lowers the cluster version, and each
   * member then rewrites its storage version (a forced snapshot). Members may restart on the older release once
   * every one reports it; the downgrade ends by itself when all run it.
   */
  async enableDowngrade(endpoint: string, minor: string): Promise<void> {
    await this.call(endpoint, '/v3/maintenance/downgrade', { action: 'VALIDATE', version: minor });
    await this.call(endpoint, '/v3/maintenance/downgrade', { action: 'ENABLE', version: minor });
  }

  /** Cancels a downgrade: the cluster version returns to the lowest release its members run. */
  async cancelDowngrade(endpoint: string): Promise<void> {
    await this.call(endpoint, '/v3/maintenance/downgrade', { action: 'CANCEL' });
  }

  /** The cluster's active alarms (any member answers for the whole cluster). */
  async alarmList(endpoint: string): Promise<Alarm[]> {
    const res = (await this.call(endpoint, '/v3/maintenance/alarm', { action: 'GET' })) as { alarms?: { memberID?: string; alarm?: string }[] };
    return (res.alarms ?? [])
      .filter((a) => a.alarm === 'NOSPACE' || a.alarm === 'CORRUPT')
      .map((a) => ({ memberId: a.memberID ?? '0', alarm: a.alarm as AlarmType }));
  }

  async alarmDisarm(endpoint: string, alarm: Alarm): Promise<void> {
    await this.call(endpoint, '/v3/maintenance/alarm', { action: 'DEACTIVATE', memberID: alarm.memberId, alarm: alarm.alarm });
  }

  /**
   * The hash of this member's key space up to `revision` (etcd hashes every key version from its last
   * compaction to there): members that hold the same data answer the same hash for the same revision.
   */
  async hashKV(endpoint: string, revision: number): Promise<MemberHash> {
    const res = (await this.call(endpoint, '/v3/maintenance/hashkv', { revision: String(revision) })) as { hash?: number | string; compact_revision?: string; hash_revision?: string };
    return { hash: Number(res.hash ?? 0), compactRevision: Number(res.compact_revision ?? 0), hashRevision: Number(res.hash_revision ?? revision) };
  }

  /** Compacts the key space's history up to `revision`, physically (the space is free for reuse when it answers). */
  async compact(endpoint: string, revision: number): Promise<void> {
    await this.call(endpoint, '/v3/kv/compaction', { revision: String(revision), physical: true });
  }

  /** Rewrites this one member's database without its free pages; the member pauses while it runs. */
  async defragment(endpoint: string, timeoutMs: number): Promise<void> {
    await this.call(endpoint, '/v3/maintenance/defragment', {}, timeoutMs);
  }

  /**
   * A snapshot of the member's database, streamed as etcd sends it over gRPC; nothing is held beyond one
   * chunk. The last 32 bytes are etcd's own sha256 of the rest, which `etcdutl snapshot restore` checks. With
   * `timeoutMs`, the whole stream must be through in that time, even if the member stops sending; a member that
   * sends nothing for 30 s while it is waited on fails it sooner.
   */
  snapshot(endpoint: string, timeoutMs?: number): AsyncIterable<Buffer> {
    const { lookup, tls, signal } = this.options;
    return snapshotOver(endpoint, { lookup, tls, signal, stallMs: SNAPSHOT_STALL_MS, ...(timeoutMs === undefined ? {} : { deadline: Date.now() + timeoutMs }) });
  }

  /** The store's revision, read through the leader (a linearizable read), so a lagging member cannot answer an older one. */
  async currentRevision(endpoint: string): Promise<number> {
    const res = (await this.call(endpoint, '/v3/kv/range', { key: 'AA==', count_only: true })) as { header?: { revision?: string } };
    return Number(res.header?.revision ?? 0);
  }

  /** How many keys the store held at `revision`. */
  async keyCount(endpoint: string, revision: number): Promise<number> {
    const res = (await this.call(endpoint, '/v3/kv/range', { key: 'AA==', range_end: 'AA==', count_only: true, revision: String(revision) })) as { count?: string };
    return Number(res.count ?? 0);
  }

  /**
   * Up to `limit` keys from `fromKey` to the end of the key space, as the store was at `revision`, in key
   * order; `more` when keys remain after the last.
   */
  async rangePage(endpoint: string, fromKey: Buffer, revision: number, limit: number): Promise<{ kvs: StoredKeyValue[]; more: boolean }> {
    const res = (await this.call(endpoint, '/v3/kv/range', { key: fromKey.toString('base64'), range_end: 'AA==', revision: String(revision), limit: String(limit) })) as {
      kvs?: { key?: string; value?: string; create_revision?: string; mod_revision?: string; version?: string }[]; more?: boolean;
    };
    const kvs = (res.kvs ?? []).map((kv) => ({
      key: Buffer.from(kv.key ?? '', 'base64'), value: Buffer.from(kv.value ?? '', 'base64'),
      createRevision: Number(kv.create_revision ?? 0), modRevision: Number(kv.mod_revision ?? 0), version: Number(kv.version ?? 0),
    }));
    return { kvs, more: res.more ?? false };
  }

  /** A watch of every key from `startRevision` (see watch-grpc.ts); it ends with the client's term. */
  watch(endpoint: string, startRevision: number): Promise<WatchStream> {
    const { lookup, tls, signal } = this.options;
    return grpcWatch(endpoint, startRevision, { lookup, tls, signal });
  }

  /**
   * Writes the operations of one source revision in one transaction, so that they land at one revision here
   * too, if every comparison of `guard` holds; answers whether they were written and the revision the store is at
   * after the transaction.
   */
  async applyRevision(endpoint: string, ops: readonly TxnOp[], guard: readonly TxnCompare[] = []): Promise<{ applied: boolean; revision: number }> {
    const b64 = (b: Buffer): string => b.toString('base64');
    const success = ops.map((o) => (o.type === 'put'
      ? { request_put: { key: b64(o.key), value: b64(o.value) } }
      : { request_delete_range: { key: b64(o.key), ...(o.rangeEnd ? { range_end: b64(o.rangeEnd) } : {}) } }));
    const compare = guard.map((c) => ({
      key: b64(c.key), target: c.target, result: c.result, ...(c.target === 'MOD' ? { mod_revision: String(c.value) } : { version: String(c.value) }),
    }));
    const res = (await this.call(endpoint, '/v3/kv/txn', { compare, success })) as { header?: { revision?: string }; succeeded?: boolean };
    // The gateway leaves out a false boolean: no comparison, or all held, answers true.
    return { applied: res.succeeded === true, revision: Number(res.header?.revision ?? 0) };
  }

  /** Every key the store holds from `first` to `last`, both included, in key order (keys only, a page at a time). */
  async keysBetween(endpoint: string, first: Buffer, last: Buffer): Promise<Buffer[]> {
    const end = keyAfter(last).toString('base64');
    const keys: Buffer[] = [];
    let from = first;
    for (;;) {
      const res = (await this.call(endpoint, '/v3/kv/range', { key: from.toString('base64'), range_end: end, keys_only: true, limit: String(KEY_PAGE) })) as {
        kvs?: { key?: string }[]; more?: boolean;
      };
      const page = (res.kvs ?? []).map((kv) => Buffer.from(kv.key ?? '', 'base64'));
      keys.push(...page);
      const lastOfPage = page[page.length - 1];
      if (!res.more || !lastOfPage) return keys;
      from = keyAfter(lastOfPage);
    }
  }

  /** The IDs of every lease the store holds (int64, kept as the decimal strings etcd sends). */
  async leases(endpoint: string): Promise<string[]> {
    const res = (await this.call(endpoint, '/v3/lease/leases', {})) as { leases?: { ID?: string }[] };
    return (res.leases ?? []).map((l) => l.ID ?? '').filter((id) => id !== '');
  }

  /** Renews a lease for its whole TTL; answers the TTL in seconds, 0 when the lease no longer exists. */
  async leaseKeepAlive(endpoint: string, id: string): Promise<number> {
    const res = (await this.call(endpoint, '/v3/lease/keepalive', { ID: id })) as { result?: { TTL?: string } };
    return Number(res.result?.TTL ?? 0);
  }

  private async open(endpoint: string, path: string, body: unknown, timeoutMs: number, bounds: CallBounds = {}): Promise<IncomingMessage> {
    const url = new URL(path, endpoint);
    const payload = JSON.stringify(body);
    const secure = url.protocol === 'https:';
    const request = secure ? httpsRequest : httpRequest;
    const { signal } = this.options;
    const abandoned = (): EtcdError => new EtcdError(endpoint, 'abandoned: the work it served has ended');
    // An ended term sends nothing more.
    if (signal?.aborted) throw abandoned();
    // The name is resolved at every call and connections are kept per address: a pod made again under its name
    // at a new address is reached there at once, never through a connection kept to the address it had.
    const address = await resolveHost(url.hostname, this.options.lookup ?? dnsLookup).catch((err: unknown) => {
      throw new EtcdError(endpoint, err instanceof Error ? err.message : String(err));
    });
    return new Promise((resolve, reject) => {
      const req = request({
        protocol: url.protocol, host: address, port: url.port || 2379, path: url.pathname,
        method: 'POST', timeout: timeoutMs, signal, agent: secure ? this.agents.https : this.agents.http,
        headers: { host: url.host, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        // The certificate is checked against the member's name, not the address connected to.
        ...(secure && isIP(url.hostname) === 0 ? { servername: url.hostname } : {}),
        ...this.options.tls,
      }, resolve);
      req.on('timeout', () => req.destroy(new EtcdError(endpoint, 'timed out')));
      const { connectWithinMs } = bounds;
      if (connectWithinMs !== undefined) {
        req.on('socket', (socket) => {
          if (!socket.connecting) return;
          const late = setTimeout(() => req.destroy(new EtcdError(endpoint, `not connected within ${connectWithinMs} ms`)), connectWithinMs);
          // Either ends the bound; the other is taken off, or a kept connection would hold this request for its life.
          const settled = (): void => {
            clearTimeout(late);
            socket.off('connect', settled);
            socket.off('close', settled);
          };
          socket.once('connect', settled);
          socket.once('close', settled);
        });
      }
      req.on('error', (err) => {
        reject(err instanceof EtcdError ? err : signal?.aborted ? abandoned() : new EtcdError(endpoint, err.message));
      });
      req.end(payload);
    });
  }

  /** The gateway answers a gRPC error as {"error": "...", "message": "...", "code": N}. */
  private async failure(endpoint: string, res: IncomingMessage): Promise<EtcdError> {
    const chunks: Buffer[] = [];
    for await (const c of res as AsyncIterable<Buffer>) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8');
    let e: { message?: string; error?: string } = {};
    try {
      e = JSON.parse(text) as typeof e;
    } catch {
      // Not JSON: the status says enough.
    }
    return new EtcdError(endpoint, e.message ?? e.error ?? `HTTP ${res.statusCode ?? 0}`, res.statusCode);
  }

  private async call(endpoint: string, path: string, body: unknown, timeoutMs = this.options.timeoutMs ?? 5000, bounds: CallBounds = {}): Promise<unknown> {
    const res = await this.open(endpoint, path, body, timeoutMs, bounds);
    if (res.statusCode !== 200) throw await this.failure(endpoint, res);
    const chunks: Buffer[] = [];
    for await (const c of res as AsyncIterable<Buffer>) chunks.push(c);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  }
}
