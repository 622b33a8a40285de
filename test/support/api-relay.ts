import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { TestContext } from 'node:test';
import { adminKubeConfig } from './lab.js';

/** Which answers of the API server a fault holds back: by the request's method and path with its query. */
export type Matcher = (method: string, path: string) => boolean;

export interface ApiRelay {
  /** The relay's address, for a client's kubeconfig (on the loopback, serving the API server's own certificate). */
  url: string;
  /** From now on, the answers of matching requests, those under way included, are held back: the server still gets every request. */
  stall(matches: Matcher): void;
  /**
   * From now on nothing passes either way, as over a link that drops every packet: new requests wait unsent,
   * answers (those under way too) wait undelivered. A client that gives up on a request is forgotten with it.
   */
  blackHole(): void;
  /** Everything held back is delivered (requests sent, answers passed on), and both ways flow again. */
  heal(): void;
  /** Every request the relay passed on to the API server: when (ms since the epoch), its method and path. */
  sent: { at: number; method: string; path: string }[];
}

/** A watch of one resource: `watches('pods')` matches the watch requests for pods. */
export const watches = (resource: string): Matcher => (method, path) =>
  method === 'GET' && /[?&]watch=(1|true)/.test(path) && new RegExp(`/${resource}\\?`).test(path);

interface Flow { method: string; path: string; answer: PassThrough; to: ServerResponse; flowing: boolean }

/**
 * The lab's real API server behind a relay on this host: every request goes to it unchanged, with the client's
 * own credentials, and the answers can be held back, as a stalled watch or a one-way black hole holds them, or
 * both ways, as a black hole holds them. It fakes nothing: it only delays bytes. Closed when the test ends.
 */
export async function apiRelay(t: TestContext): Promise<ApiRelay> {
  const cluster = adminKubeConfig().getCurrentCluster();
  if (!cluster?.caFile) throw new Error('the admin kubeconfig names no CA file in the lab\'s PKI');
  const target = new URL(cluster.server);
  const pki = dirname(cluster.caFile);
  const ca = readFileSync(cluster.caFile);
  const flows = new Set<Flow>();
  let stalled: Matcher | undefined;
  let holed = false;
  /** Requests held by the black hole: each one's answer, and how to send it. */
  const unsent = new Map<ServerResponse, () => void>();
  const flow = (f: Flow): void => {
    if (!f.flowing) f.answer.pipe(f.to);
    f.flowing = true;
  };

  const relay = (from: IncomingMessage, to: ServerResponse): void => {
    if (!holed) {
      forward(from, to);
      return;
    }
    unsent.set(to, () => { forward(from, to); });
    to.on('close', () => { unsent.delete(to); });
  };
  const sent: ApiRelay['sent'] = [];
  const forward = (from: IncomingMessage, to: ServerResponse): void => {
    const [method, path] = [from.method ?? 'GET', from.url ?? '/'];
    sent.push({ at: Date.now(), method, path });
    const upstream = request({ host: target.hostname, port: target.port, method, path, ca, headers: { ...from.headers, host: target.host } }, (answer) => {
      to.writeHead(answer.statusCode ?? 502, answer.headers);
      const f: Flow = { method, path, answer: answer.pipe(new PassThrough()), to, flowing: false };
      flows.add(f);
      to.on('close', () => { flows.delete(f); });
      if (!stalled?.(method, path)) flow(f);
    });
    upstream.on('error', () => { to.destroy(); });
    // The client gone (or the answer complete), the request upstream ends too: a watch is not left open.
    to.on('close', () => { upstream.destroy(); });
    from.pipe(upstream);
  };
  const stall = (matches: Matcher): void => {
    stalled = matches;
    for (const f of flows) {
      if (f.flowing && matches(f.method, f.path)) {
        f.answer.unpipe(f.to);
        f.flowing = false;
      }
    }
  };
  // The API server's certificate names 127.0.0.1 too: clients verify the relay as they would the server.
  const server = createServer({ cert: readFileSync(join(pki, 'apiserver.crt')), key: readFileSync(join(pki, 'apiserver.key')) }, relay);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    for (const f of flows) f.to.destroy();
    for (const to of unsent.keys()) to.destroy();
    server.close(() => { resolve(); });
  }));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, sent,
    stall,
    blackHole: () => {
      holed = true;
      stall(() => true);
    },
    heal: () => {
      stalled = undefined;
      holed = false;
      const held = [...unsent.values()];
      unsent.clear();
      for (const send of held) send();
      for (const f of flows) flow(f);
    },
  };
}
