import { Client, credentials } from '@grpc/grpc-js';
import type { ChannelOptions } from '@grpc/grpc-js';
import type { LookupFunction } from 'node:net';
import type { SecureContextOptions } from 'node:tls';

/** The receive window of a stream and of its connection (see snapshot-grpc.ts for why a few MiB). */
export const FLOW_CONTROL_WINDOW = 8 * 1024 * 1024;

export interface GrpcOptions {
  lookup?: LookupFunction;
  tls?: SecureContextOptions;
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

/** A gRPC channel to one member's client URL, with the operator's client certificate when it is https. */
export async function grpcClient(endpoint: string, o: GrpcOptions): Promise<Client> {
  const url = new URL(endpoint);
  const address = await resolve(url.hostname, o.lookup);
  const pem = (v: unknown): Buffer | undefined => (typeof v === 'string' || Buffer.isBuffer(v) ? Buffer.from(v) : undefined);
  const secure = url.protocol === 'https:';
  const channel: ChannelOptions = {
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW,
    ...(secure ? { 'grpc.ssl_target_name_override': url.hostname, 'grpc.default_authority': url.hostname } : {}),
  };
  return new Client(`${address}:${url.port || '2379'}`,
    secure ? credentials.createSsl(pem(o.tls?.ca) ?? null, pem(o.tls?.key) ?? null, pem(o.tls?.cert) ?? null) : credentials.createInsecure(), channel);
}
