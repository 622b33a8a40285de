import { Agent, request } from 'node:https';
import type { RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';

/** A non-2xx answer of the API server, with its Status body when it sent one. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly reason: string, message: string) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * A `.catch()` handler for idempotent calls: an answer with this status (409 for a create, 404 for a
 * delete) means the work is already done; anything else is rethrown.
 */
export const ignoreStatus = (status: number) => (err: unknown): void => {
  if (!(err instanceof ApiError && err.status === status)) throw err;
};

/**
 * HTTP to the API server with the kubeconfig's credentials over one keep-alive agent shared by every call and
 * every watch (a new agent per call leaks sockets across watch reconnects).
 */
export class ApiTransport {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  private readonly server: URL;

  /** `answered` learns of each request's method and status code (0 when no answer came): the operator counts its API traffic. */
  constructor(private readonly kubeConfig: KubeConfig, private readonly answered: (method: string, code: number) => void = () => undefined) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
  }

  /** One request; the JSON body of a 2xx answer, else an ApiError. */
  async call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<unknown> {
    const res = await this.open(method, path, body, contentType);
    const text = await readAll(res);
    if (res.statusCode === undefined || res.statusCode >= 300) throw apiError(res.statusCode ?? 0, text, `${method} ${path}`);
    return text.length > 0 ? (JSON.parse(text) as unknown) : undefined;
  }

  /** A streaming GET (a watch): the response, already checked to be 200. */
  async stream(path: string, signal: AbortSignal): Promise<IncomingMessage> {
    const res = await this.open('GET', path, undefined, undefined, signal);
    if (res.statusCode !== 200) {
      throw apiError(res.statusCode ?? 0, await readAll(res), `GET ${path}`);
    }
    return res;
  }

  private async open(method: string, path: string, body: unknown, contentType: string | undefined, signal?: AbortSignal): Promise<IncomingMessage> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const options: RequestOptions = {
      protocol: this.server.protocol,
      hostname: this.server.hostname,
      port: this.server.port,
      path: this.server.pathname.replace(/\/$/, '') + path,
      method,
      agent: this.agent,
      headers: { accept: 'application/json', ...(payload !== undefined && contentType ? { 'content-type': contentType } : {}) },
      signal,
    };
    await this.kubeConfig.applyToHTTPSOptions(options);
    return new Promise((resolve, reject) => {
      const req = request(options, (res) => {
        this.answered(method, res.statusCode ?? 0);
        resolve(res);
      });
      req.on('error', (err) => {
        this.answered(method, 0);
        reject(err);
      });
      req.end(payload);
    });
  }
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    res.on('error', reject);
  });
}

/** An error answer: a Status object, or plain text (a path the server does not serve answers "404 page not found"). */
function apiError(status: number, text: string, what: string): ApiError {
  let s: { reason?: string; message?: string } = {};
  try {
    s = JSON.parse(text) as typeof s;
  } catch {
    s = { message: text.trim().slice(0, 200) };
  }
  return new ApiError(status, s.reason ?? '', `${what}: HTTP ${status}${s.message ? `: ${s.message}` : ''}`);
}
