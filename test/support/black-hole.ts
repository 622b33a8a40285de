import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
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

/**
 * A loopback port whose SYNs are dropped: what a client sees of an address no route leads to yet (a Service the
 * nodes' proxies do not route). A child process listens with a queue of one and never accepts (its event loop is
 * held), and the queue is filled here, so the kernel drops every further handshake. Stopped when the test ends.
 */
export async function droppingPort(t: TestContext): Promise<number> {
  const child = spawn(process.execPath, ['-e', `
    const server = require('node:net').createServer();
    server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      process.stdout.write(server.address().port + '\\n');
      // Held from here on (the write to a pipe is done by now), so nothing is ever accepted; gone after 2 min
      // even if the parent never stops it.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120000);
      process.exit(0);
    });`], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => { child.kill('SIGKILL'); });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => { resolve(Number(d.toString().trim())); });
    child.once('exit', (code) => { reject(new Error(`the listener exited (${String(code)})`)); });
    setTimeout(() => { reject(new Error('the listener did not say its port within 10 s')); }, 10_000).unref();
  });
  const filling: Socket[] = [];
  t.after(() => { for (const s of filling) s.destroy(); });
  // The queue of one holds two completed handshakes (the kernel's full is more than the backlog).
  for (let i = 0; i < 2; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    filling.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      setTimeout(() => { reject(new Error('the listener\'s queue did not take a connection')); }, 2000).unref();
    });
  }
  return port;
}
