import { createServer, request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lab } from './lab.js';

/** Which requests to the store a fault breaks: by the request's method and path with its query. */
export type StoreMatcher = (method: string, path: string) => boolean;

export interface StoreRelay {
  /** The relay's address, for an EtcdBackup's s3.endpoint (on the lab bridge: pods reach it too). */
  endpoint: string;
  /** From now on the connection of every matching request is cut before the store sees it. */
  refuse(matches: StoreMatcher): void;
  /**
   * From now on the next `times` matching requests are held (all of them by default): the store never sees
   * them and the client waits for an answer, as over a connection gone silent.
   */
  hold(matches: StoreMatcher, times?: number): void;
  /**
   * From now on the answer to every matching request stops after its first `bytes` bytes, its connection left
   * open and silent, as a download that stalls midway.
   */
  stallAfter(matches: StoreMatcher, bytes: number): void;
  /** Every request passes again; those held or stalled are cut. */
  heal(): void;
  /** The requests cut so far: their method and path. */
  refused: { method: string; path: string }[];
  /** The requests held so far. */
  held: { method: string; path: string }[];
  /** The requests whose answer stalled so far. */
  stalled: { method: string; path: string }[];
}

/**
 * A real S3 store (MinIO) behind a relay on the lab bridge: every request goes to it unchanged, signed by the
 * client for the relay's address, which the store checks as sent. A fault cuts or holds the requests it
 * matches, as a broken or a stalled link does: it answers nothing in the store's name. Closed when the test ends.
 */
export async function storeRelay(t: { after(fn: () => unknown): void }, storeEndpoint: string): Promise<StoreRelay> {
  const target = new URL(storeEndpoint);
  let refusing: StoreMatcher | undefined;
  let holding: StoreMatcher | undefined;
  let holdsLeft = 0;
  let stalling: { matches: StoreMatcher; bytes: number } | undefined;
  const refused: StoreRelay['refused'] = [];
  const held: StoreRelay['held'] = [];
  const stalled: StoreRelay['stalled'] = [];
  const heldSockets = new Set<IncomingMessage['socket']>();
  /** Keeps the client's connection open, to be cut when the relay heals. */
  const keepOpen = (socket: IncomingMessage['socket']): void => {
    heldSockets.add(socket);
    socket.once('close', () => heldSockets.delete(socket));
  };
  const forward = (from: IncomingMessage, to: ServerResponse): void => {
    const [method, path] = [from.method ?? 'GET', from.url ?? '/'];
    if (refusing?.(method, path)) {
      refused.push({ method, path });
      from.socket.destroy();
      return;
    }
    if (holdsLeft > 0 && holding?.(method, path)) {
      holdsLeft--;
      held.push({ method, path });
      keepOpen(from.socket);
      return;
    }
    const stall = stalling?.matches(method, path) ? stalling.bytes : undefined;
    const upstream = request({ host: target.hostname, port: target.port, method, path, headers: from.headers }, (answer) => {
      to.writeHead(answer.statusCode ?? 502, answer.headers);
      if (stall === undefined) {
        answer.pipe(to);
        return;
      }
      stalled.push({ method, path });
      keepOpen(from.socket);
      let sent = 0;
      answer.on('data', (chunk: Buffer) => {
        const part = chunk.subarray(0, Math.max(0, stall - sent));
        sent += part.length;
        if (part.length > 0) to.write(part);
        if (sent >= stall) answer.pause();
      });
    });
    upstream.on('error', () => { to.destroy(); });
    to.on('close', () => { upstream.destroy(); });
    from.pipe(upstream);
  };
  const server = createServer(forward);
  await new Promise<void>((resolve) => server.listen(0, lab().hostIP, resolve));
  t.after(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => { resolve(); });
  }));
  return {
    endpoint: `http://${lab().hostIP}:${(server.address() as AddressInfo).port}`,
    refused,
    held,
    stalled,
    stallAfter: (matches, bytes) => { stalling = { matches, bytes }; },
    refuse: (matches) => { refusing = matches; },
    hold: (matches, times = Infinity) => {
      holding = matches;
      holdsLeft = times;
    },
    heal: () => {
      refusing = undefined;
      holding = undefined;
      holdsLeft = 0;
      stalling = undefined;
      for (const socket of heldSockets) socket.destroy();
    },
  };
}
