import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { Registry } from './prometheus.js';

export interface HealthServerOptions {
  host: string;
  port: number;
  registry: Registry;
  /** Ready to serve: caches synced. Leadership is not part of it, so standbys stay Ready. */
  ready(): boolean;
  /**
   * Why the process is wedged and should be restarted, or undefined while it is not. A blocked event loop
   * needs no check: it answers nothing, and the probe's timeout fails it.
   */
  live(): string | undefined;
}

/** `/metrics` (Prometheus text), `/healthz` (the process is alive and not wedged) and `/readyz`. */
export async function startHealthServer(options: HealthServerOptions): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => { res.writeHead(200, { 'content-type': options.registry.contentType }).end(text); },
        (err: unknown) => { res.writeHead(500).end(String(err)); },
      );
    } else if (path === '/healthz') {
      const wedged = options.live();
      res.writeHead(wedged === undefined ? 200 : 500, { 'content-type': 'text/plain' }).end(wedged ?? 'ok');
    } else if (path === '/readyz') {
      const ready = options.ready();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok' : 'caches not synced');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  return server;
}
