import { Client, credentials } from '@grpc/grpc-js';
import type { ChannelOptions } from '@grpc/grpc-js';
import type { LookupFunction } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import { EtcdError } from './etcd-error.js';

/**
 * etcd's Maintenance.Snapshot over native gRPC. The JSON gateway re-encodes every chunk as base64 inside
 * JSON on both ends, which ran at a fifth of `etcdctl snapshot save` on the lab; gRPC streams the bytes.
 * Only this one call is needed, so its two messages are encoded by hand: the request is empty, and of the
 * response only field 3 (`bytes blob`) matters.
 */

/** Field 3 (blob) of a SnapshotResponse; the header, remaining_bytes and version are skipped. */
export function snapshotBlob(message: Buffer): Buffer {
  let i = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = message[i++] ?? 0;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
      shift += 7;
    }
  };
  let blob: Buffer = Buffer.alloc(0);
  while (i < message.length) {
    const key = varint();
    const wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 2) {
      const length = varint();
      if (key >>> 3 === 3) blob = message.subarray(i, i + length);
      i += length;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`unexpected protobuf wire type ${wire}`);
  }
  return blob;
}

export interface GrpcSnapshotOptions {
  lookup?: LookupFunction;
  tls?: SecureContextOptions;
  /** The whole snapshot must be through by then (ms since the epoch): a stream gone silent fails at it too. */
  deadline?: number;
  /** The snapshot is cancelled once this aborts. */
  signal?: AbortSignal;
}

/** Resolves the member's name ourselves (an operator outside the cluster asks the cluster DNS), and keeps the name for TLS. */
function resolve(host: string, lookup: LookupFunction | undefined): Promise<string> {
  if (!lookup) return Promise.resolve(host);
  return new Promise((ok, fail) => {
    lookup(host, {}, (err, address) => {
      if (err) fail(err);
      else ok(typeof address === 'string' ? address : (address[0]?.address ?? host));
    });
  });
}

export async function* grpcSnapshot(endpoint: string, o: GrpcSnapshotOptions = {}): AsyncIterable<Buffer> {
  const url = new URL(endpoint);
  const address = await resolve(url.hostname, o.lookup);
  const pem = (v: unknown): Buffer | undefined => (typeof v === 'string' || Buffer.isBuffer(v) ? Buffer.from(v) : undefined);
  const secure = url.protocol === 'https:';
  const channel: ChannelOptions = {
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    ...(secure ? { 'grpc.ssl_target_name_override': url.hostname, 'grpc.default_authority': url.hostname } : {}),
  };
  const client = new Client(`${address}:${url.port || '2379'}`,
    secure ? credentials.createSsl(pem(o.tls?.ca) ?? null, pem(o.tls?.key) ?? null, pem(o.tls?.cert) ?? null) : credentials.createInsecure(), channel);
  try {
    const call = client.makeServerStreamRequest('/etcdserverpb.Maintenance/Snapshot', () => Buffer.alloc(0), snapshotBlob, {},
      o.deadline === undefined ? {} : { deadline: o.deadline });
    const cancel = (): void => { call.cancel(); };
    o.signal?.addEventListener('abort', cancel, { once: true });
    if (o.signal?.aborted) cancel();
    try {
      for await (const blob of call as AsyncIterable<Buffer>) yield blob;
    } catch (err) {
      throw new EtcdError(endpoint, `snapshot: ${(err as Error).message}`);
    } finally {
      o.signal?.removeEventListener('abort', cancel);
    }
  } finally {
    client.close();
  }
}
