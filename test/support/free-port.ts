import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP port that nothing listens on now, as the kernel hands out for port 0, for a server a test starts as a
 * separate process. `npm test` runs two suites at once, so a port picked at random could be taken by the other.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(0, host, resolve); });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
