import { on } from 'node:events';
import { connect, constants } from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import { isIP } from 'node:net';
import { EtcdError } from './etcd-error.js';
import { FLOW_CONTROL_WINDOW } from './grpc.js';
import type { GrpcOptions } from './grpc.js';
import { SnapshotFrames } from './snapshot-frames.js';

/**
 * etcd's Maintenance.Snapshot as one gRPC call over Node's own HTTP/2. The JSON gateway re-encodes every
 * chunk as base64 inside JSON on both ends (a fifth of `etcdctl snapshot save` on the lab); a generic gRPC
 * client assembles and copies every message. Here the response's DATA frames are read as they come and the
 * snapshot's bytes passed on as views of them (see SnapshotFrames). The request is an empty message.
 */

export interface GrpcSnapshotOptions extends GrpcOptions {
  /** The whole snapshot must be through by then (ms since the epoch): a stream gone silent fails at it too. */
  deadline?: number;
  /** The snapshot is cancelled once this aborts. */
  signal?: AbortSignal;
  /**
   * The member must send something within this long whenever the reader waits for it (time the reader spends on
   * what it was given, such as a slow upload, does not count): a member that freezes mid-stream fails the
   * snapshot within this bound instead of at the whole snapshot's deadline, an hour later.
   */
  stallMs?: number;
}

const EMPTY_MESSAGE = Buffer.from([0, 0, 0, 0, 0]);

/** gRPC's status from a header block: undefined if it has none (a response whose trailers never came). */
function grpcStatus(headers: IncomingHttpHeaders): { code: number; message: string } | undefined {
  const code = headers['grpc-status'];
  if (code === undefined) return undefined;
  const message = headers['grpc-message'];
  return { code: Number(code), message: decodeURIComponent(typeof message === 'string' ? message : '') };
}

/** gRPC's timeout header: at most 8 digits, so milliseconds up to about a day, then seconds. */
export function grpcTimeout(ms: number): string {
  return ms <= 99_999_999 ? `${Math.ceil(ms)}m` : `${Math.ceil(ms / 1000)}S`;
}

/**
 * The response's DATA frames one by one, as the stream emits them: its own iterator reads whatever has
 * gathered and joins it into a new buffer first, a copy of the whole snapshot that left the garbage
 * collector the largest cost of a Volume backup after hashing (a 1.6 GB snapshot on the host: the backup's
 * CPU 4.9 s with it, 3.2 s without). Backpressure stays: the stream is paused while 4 MiB of frames (at
 * most 16 KiB each) wait unread, and resumed once they are down to 1 MiB. The iteration ends at the stream's
 * end or close (a call cut short is told apart by its missing status) and throws its error.
 */
function frameData(call: ClientHttp2Stream): AsyncIterable<[Buffer]> {
  return on(call, 'data', { close: ['end', 'close'], highWaterMark: 256, lowWaterMark: 64 }) as AsyncIterable<[Buffer]>;
}

export async function* grpcSnapshot(endpoint: string, o: GrpcSnapshotOptions = {}): AsyncIterable<Buffer> {
  const url = new URL(endpoint);
  const secure = url.protocol === 'https:';
  const fail = (message: string): EtcdError => new EtcdError(endpoint, `snapshot: ${message}`);
  const session: ClientHttp2Session = connect(`${secure ? 'https' : 'http'}://${url.hostname}:${url.port || '2379'}`, {
    // HTTP/2's default 64 KiB window let etcd send one window per round trip: a snapshot arrived at 236 MiB/s
    // from a member on the same host and at 0.4x etcdctl's speed on the lab. A few MiB keep it streaming.
    settings: { initialWindowSize: FLOW_CONTROL_WINDOW },
    ...(o.lookup ? { lookup: o.lookup } : {}),
    ...(secure ? { ca: o.tls?.ca, key: o.tls?.key, cert: o.tls?.cert, ...(isIP(url.hostname) ? {} : { servername: url.hostname }) } : {}),
  });
  session.once('connect', () => { session.setLocalWindowSize(FLOW_CONTROL_WINDOW); });
  const timeoutMs = o.deadline === undefined ? undefined : Math.max(1, o.deadline - Date.now());
  const call = session.request({
    ':method': 'POST', ':path': '/etcdserverpb.Maintenance/Snapshot', 'content-type': 'application/grpc', te: 'trailers',
    ...(timeoutMs === undefined ? {} : { 'grpc-timeout': grpcTimeout(timeoutMs) }),
  });
  // Whatever ends the call early (the deadline, the signal, the connection) ends it with a reason, and the
  // iteration below throws that reason: a snapshot cut short is never passed on as a whole one.
  let stopped: EtcdError | undefined;
  const stop = (reason: EtcdError): void => {
    stopped ??= reason;
    call.close(constants.NGHTTP2_CANCEL);
  };
  session.on('error', (err: Error) => { stop(fail(err.message)); });
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => { stop(fail('deadline exceeded')); }, timeoutMs);
  const cancel = (): void => { stop(fail('cancelled')); };
  o.signal?.addEventListener('abort', cancel, { once: true });
  if (o.signal?.aborted) cancel();
  let status: ReturnType<typeof grpcStatus>;
  call.on('response', (headers) => {
    const httpStatus = headers[':status'];
    if (httpStatus !== 200) stop(fail(`HTTP status ${String(httpStatus)}`));
    // A call refused at once answers with its status in the headers and no body ("trailers only").
    status = grpcStatus(headers);
  });
  call.on('trailers', (trailers: IncomingHttpHeaders) => { status = grpcStatus(trailers); });
  call.end(EMPTY_MESSAGE);
  let stall: NodeJS.Timeout | undefined;
  try {
    const frames = new SnapshotFrames();
    const waitForMember = (): void => {
      if (o.stallMs !== undefined) stall = setTimeout(() => { stop(fail(`the member sent nothing for ${o.stallMs ?? 0} ms in the middle of the snapshot`)); }, o.stallMs);
    };
    try {
      waitForMember();
      for await (const [chunk] of frameData(call)) {
        clearTimeout(stall);
        for (const blob of frames.feed(chunk)) yield blob;
        if (stopped) break;
        waitForMember();
      }
    } catch (err) {
      throw stopped ?? fail((err as Error).message);
    }
    if (stopped) throw stopped;
    if (!status) throw fail('the stream ended without a gRPC status');
    if (status.code !== 0) throw fail(`${status.message} (gRPC status ${status.code})`);
    try {
      frames.finish();
    } catch (err) {
      throw fail((err as Error).message);
    }
  } finally {
    clearTimeout(timer);
    clearTimeout(stall);
    o.signal?.removeEventListener('abort', cancel);
    if (!call.closed) call.close(constants.NGHTTP2_CANCEL);
    session.close();
  }
}
