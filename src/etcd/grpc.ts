import type { ChannelOptions, Client } from '@grpc/grpc-js';
import type { LookupFunction } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import { resolveHost } from './dns-lookup.js';

/** The receive window of a stream and of its connection (see snapshot-grpc.ts for why a few MiB). */
export const FLOW_CONTROL_WINDOW = 8 * 1024 * 1024;

export interface GrpcOptions {
  lookup?: LookupFunction;
  tls?: SecureContextOptions;
}

let loaded: Promise<typeof import('@grpc/grpc-js')> | undefined;

/**
 * gRPC, loaded at its first use (a change log's watch): some 13 MiB and 0.2 s of CPU that an
 * operator none of whose clusters has a continuous backup never pays.
 */
export function grpcModule(): Promise<typeof import('@grpc/grpc-js')> {
  loaded ??= import('@grpc/grpc-js');
  return loaded;
}

/** A gRPC channel to one member's client URL, with the operator's client certificate when it is https. */
export async function grpcClient(endpoint: string, o: GrpcOptions): Promise<Client> {
  const { Client, credentials } = await grpcModule();
  const url = new URL(endpoint);
  const address = await resolveHost(url.hostname, o.lookup);
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
