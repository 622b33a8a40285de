import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/**
 * A listener on the loopback that accepts connections and never sends a byte: what a client sees of a peer
 * behind a black hole (its connection up, no answer). Closed when the test ends. It imitates no protocol.
 */
export async function blackHole(t: TestContext): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    server.close(() => { resolve(); });
  }));
  return (server.address() as AddressInfo).port;
}
