import { EtcdError } from './etcd-error.js';
import { grpcClient } from './grpc.js';
import type { GrpcOptions } from './grpc.js';
import { lastFields } from './protobuf.js';

/**
 * etcd's Maintenance.Snapshot over native gRPC. The JSON gateway re-encodes every chunk as base64 inside
 * JSON on both ends, which ran at a fifth of `etcdctl snapshot save` on the lab; gRPC streams the bytes.
 * Only this one call is needed, so its two messages are encoded by hand: the request is empty, and of the
 * response only field 3 (`bytes blob`) matters.
 */

/** Field 3 (blob) of a SnapshotResponse; the header, remaining_bytes and version are skipped. */
export function snapshotBlob(message: Buffer): Buffer {
  const blob = lastFields(message).get(3);
  return Buffer.isBuffer(blob) ? blob : Buffer.alloc(0);
}

export interface GrpcSnapshotOptions extends GrpcOptions {
  /** The whole snapshot must be through by then (ms since the epoch): a stream gone silent fails at it too. */
  deadline?: number;
  /** The snapshot is cancelled once this aborts. */
  signal?: AbortSignal;
}

export async function* grpcSnapshot(endpoint: string, o: GrpcSnapshotOptions = {}): AsyncIterable<Buffer> {
  const client = await grpcClient(endpoint, o);
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
