import type { ClientDuplexStream, Metadata } from '@grpc/grpc-js';
import { EtcdError } from './etcd-error.js';
import { grpcClient, grpcModule } from './grpc.js';
import type { GrpcOptions } from './grpc.js';
import { encodeField, fieldsOf, lastFields } from './protobuf.js';

/**
 * etcd's Watch over native gRPC, for the change log: every key, from a revision on, each event kept as the
 * mvccpb.Event bytes etcd sent (stored as they are, decoded only when replayed). Progress is asked for by
 * the caller; etcd answers it with the revision through which every event has been sent.
 */

/** One event as etcd encoded it (mvccpb.Event), with the revision it was written at. */
export interface WatchedEvent {
  revision: number;
  raw: Buffer;
}

export type WatchMessage =
  | { kind: 'events'; events: WatchedEvent[] }
  /** Every event up to and including `revision` has been sent. */
  | { kind: 'progress'; revision: number }
  /** The start revision was compacted away: the events from it to `compactRevision` cannot be had. */
  | { kind: 'compacted'; compactRevision: number }
  | { kind: 'canceled'; reason: string };

export interface WatchStream {
  messages: AsyncIterable<WatchMessage>;
  /** Asks etcd for a progress message; answers come in the order asked. */
  requestProgress(): void;
  close(): void;
}

/** A decoded event, for replay. */
export interface ChangeEvent {
  type: 'put' | 'delete';
  key: Buffer;
  value: Buffer;
  revision: number;
  createRevision: number;
  version: number;
  lease: number;
}

const ALL_KEYS = Buffer.from([0]);

/** WatchRequest{create_request: {key: "\0", range_end: "\0" (every key), start_revision, fragment: true}}. */
export function watchCreateRequest(startRevision: number): Buffer {
  const create = Buffer.concat([encodeField(1, ALL_KEYS), encodeField(2, ALL_KEYS), encodeField(3, startRevision), encodeField(8, true)]);
  return encodeField(1, create);
}

/** WatchRequest{progress_request: {}}. */
export const PROGRESS_REQUEST = encodeField(3, Buffer.alloc(0));

/** Reads a WatchResponse into what the change log needs of it. */
export function watchMessage(message: Buffer): WatchMessage | undefined {
  let headerRevision = 0;
  let created = false;
  let canceled = false;
  let compactRevision = 0;
  let reason = '';
  const events: WatchedEvent[] = [];
  for (const f of fieldsOf(message)) {
    if (f.field === 1 && f.wire === 2) headerRevision = Number(lastFields(f.value).get(3) ?? 0);
    else if (f.field === 3) created = f.value !== 0;
    else if (f.field === 4) canceled = f.value !== 0;
    else if (f.field === 5) compactRevision = Number(f.value);
    else if (f.field === 6 && f.wire === 2) reason = f.value.toString('utf8');
    else if (f.field === 11 && f.wire === 2) events.push({ revision: eventRevision(f.value), raw: Buffer.from(f.value) });
  }
  if (compactRevision > 0) return { kind: 'compacted', compactRevision };
  if (canceled) return { kind: 'canceled', reason: reason || 'canceled by etcd' };
  if (created) return undefined;
  if (events.length > 0) return { kind: 'events', events };
  return { kind: 'progress', revision: headerRevision };
}

function eventRevision(raw: Buffer): number {
  const kv = lastFields(raw).get(2);
  return Buffer.isBuffer(kv) ? Number(lastFields(kv).get(3) ?? 0) : 0;
}

/** An mvccpb.Event: type (0 PUT, 1 DELETE) and its KeyValue (key 1, create_revision 2, mod_revision 3, version 4, value 5, lease 6). */
export function decodeEvent(raw: Buffer): ChangeEvent {
  const event = lastFields(raw);
  const kvBytes = event.get(2);
  const kv = Buffer.isBuffer(kvBytes) ? lastFields(kvBytes) : new Map<number, number | Buffer>();
  const bytes = (n: number): Buffer => { const v = kv.get(n); return Buffer.isBuffer(v) ? v : Buffer.alloc(0); };
  const num = (n: number): number => { const v = kv.get(n); return typeof v === 'number' ? v : 0; };
  return {
    type: event.get(1) === 1 ? 'delete' : 'put', key: bytes(1), value: bytes(5),
    revision: num(3), createRevision: num(2), version: num(4), lease: num(6),
  };
}

/**
 * etcd's require-leader metadata (clientv3.WithRequireLeader): a member without a leader refuses the watch, and
 * cancels it ("no leader") once it has lost its leader, instead of going on answering from its own store while
 * the majority writes on without it.
 */
async function requireLeader(): Promise<Metadata> {
  const metadata = new (await grpcModule()).Metadata();
  metadata.set('hasleader', 'true');
  return metadata;
}

/** Opens a watch of every key from `startRevision`; the stream ends when `signal` aborts or `close()` is called. */
export async function grpcWatch(endpoint: string, startRevision: number, o: GrpcOptions & { signal?: AbortSignal }): Promise<WatchStream> {
  const client = await grpcClient(endpoint, o);
  const call: ClientDuplexStream<Buffer, WatchMessage | undefined> = client.makeBidiStreamRequest(
    '/etcdserverpb.Watch/Watch', (b: Buffer) => b, watchMessage, await requireLeader(),
  );
  const close = (): void => {
    call.cancel();
    client.close();
  };
  o.signal?.addEventListener('abort', close, { once: true });
  call.write(watchCreateRequest(startRevision));
  async function* messages(): AsyncIterable<WatchMessage> {
    try {
      for await (const m of call as AsyncIterable<WatchMessage | undefined>) if (m) yield m;
    } catch (err) {
      if (o.signal?.aborted) return;
      throw new EtcdError(endpoint, `watch: ${(err as Error).message}`);
    } finally {
      o.signal?.removeEventListener('abort', close);
      close();
    }
  }
  return { messages: messages(), requestProgress: () => { call.write(PROGRESS_REQUEST); }, close };
}
