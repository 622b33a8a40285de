import { Agent, request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { ApiCredentials, ApiRequestOptions } from './credentials.js';
import { deadline } from './abortable.js';

/** A non-2xx answer of the API server, with its Status body when it sent one. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly reason: string, message: string) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * An answer that refuses a request as made (bad, forbidden, invalid), rather than failing to serve it: asking
 * again the same way gets the same answer. (A 409 to a create means the object exists, and is not one.)
 */
export const refusedAsMade = (err: unknown): err is ApiError => err instanceof ApiError && [400, 403, 422].includes(err.status);

/**
 * A `.catch()` handler for idempotent calls: an answer with this status (409 for a create, 404 for a
 * delete) means the work is already done; anything else is rethrown.
 */
export const ignoreStatus = (status: number) => (err: unknown): void => {
  if (!(err instanceof ApiError && err.status === status)) throw err;
};

/** The object at `path`, or undefined where there is none (404); any other failure is thrown. */
export async function getIfExists<T>(transport: ApiTransport, path: string): Promise<T | undefined> {
  try {
    return (await transport.call('GET', path)) as T;
  } catch (err) {
    ignoreStatus(404)(err);
    return undefined;
  }
}

export interface TransportOptions {
  /**
   * A request (a call, or a watch until its answer starts) that has not been answered in full this long is
   * abandoned: a black-holed connection fails the call instead of hanging it, and its caller decides anew.
   */
  timeoutMs?: number;
  /** Every request made through this transport is abandoned once this aborts (the end of a leadership term). */
  signal?: AbortSignal;
}

/** As long as the API server itself gives a request (its default --request-timeout is 60 s) is too long to wait. */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * HTTP to the API server with the kubeconfig's credentials over one keep-alive agent shared by every call and
 * every watch (a new agent per call leaks sockets across watch reconnects). No request waits for ever: each
 * is bounded by a timeout and by the transport's signal.
 */
export class ApiTransport {
  readonly agent: Agent;
  private readonly server: URL;
  private readonly host: string;
  private readonly timeoutMs: number;

  /** `answered` learns of each request's method and status code (0 when no answer came): the operator counts its API traffic. */
  constructor(
    private readonly credentials: ApiCredentials,
    private readonly answered: (method: string, code: number) => void = () => undefined,
    private readonly options: TransportOptions = {},
    agent?: Agent,
  ) {
    this.server = new URL(credentials.server);
    // A URL keeps an IPv6 address in brackets, which a request would look up as a name.
    this.host = this.server.hostname.replace(/^\[(.*)\]$/, '$1');
    // Whole milliseconds, at least one: bounds computed from performance.now() (the time left to a lease's renew
    // deadline) have fractions, and a timer of zero would give up before the request is sent.
    this.timeoutMs = Math.max(1, Math.ceil(options.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    this.agent = agent ?? new Agent({ keepAlive: true, maxSockets: 64 });
  }

  /**
   * The same transport (agent, credentials, counting), whose requests are also abandoned when `signal` aborts:
   * for a leadership term, so that nothing it started outlives it, or for one attempt with a deadline.
   */
  within(signal: AbortSignal | undefined, timeoutMs = this.timeoutMs): ApiTransport {
    return new ApiTransport(this.credentials, this.answered, { timeoutMs, signal: signal ? this.joined(signal) : this.options.signal }, this.agent);
  }

  /** One request; the JSON body of a 2xx answer, else an ApiError. Bounded as a whole by the timeout. */
  async call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<unknown> {
    const bound = deadline(this.timeoutMs, () => new ApiTimeout(`${method} ${path}`, this.timeoutMs));
    const signal = this.joined(bound.signal);
    try {
      const res = await this.open(method, path, body, contentType, signal);
      const text = await readAll(res);
      if (res.statusCode === undefined || res.statusCode >= 300) throw apiError(res.statusCode ?? 0, text, `${method} ${path}`);
      return text.length > 0 ? (JSON.parse(text) as unknown) : undefined;
    } catch (err) {
      throw signal.aborted ? this.abandoned(`${method} ${path}`, signal) : err;
    } finally {
      bound.clear();
    }
  }

  /**
   * A streaming GET (a watch): the response, already checked to be 200. Its start is bounded by the timeout;
   * the stream itself only by `signal` and the transport's own (a watch is long by design: its reader notices
   * silence).
   */
  async stream(path: string, signal: AbortSignal): Promise<IncomingMessage> {
    const started = deadline(this.timeoutMs, () => new ApiTimeout(`GET ${path}`, this.timeoutMs));
    const joined = this.joined(AbortSignal.any([signal, started.signal]));
    try {
      const res = await this.open('WATCH', path, undefined, undefined, joined);
      if (res.statusCode !== 200) throw apiError(res.statusCode ?? 0, await readAll(res), `GET ${path}`);
      return res;
    } catch (err) {
      throw joined.aborted ? this.abandoned(`GET ${path}`, joined) : err;
    } finally {
      started.clear();
    }
  }

  /** Why a request was given up: its timeout, or the reason its signal gave (the end of a term). */
  private abandoned(what: string, signal: AbortSignal): Error {
    const reason: unknown = signal.reason;
    return reason instanceof ApiTimeout ? reason : new ApiAbandoned(what, reason);
  }

  private joined(signal: AbortSignal): AbortSignal {
    return this.options.signal ? AbortSignal.any([this.options.signal, signal]) : signal;
  }

  private async open(method: string, path: string, body: unknown, contentType: string | undefined, signal: AbortSignal): Promise<IncomingMessage> {
    // An ended term sends nothing more: not even a request that would be abandoned a moment later.
    if (signal.aborted) throw new Error('aborted before it was sent');
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const options: ApiRequestOptions = {
      protocol: this.server.protocol,
      hostname: this.host,
      port: this.server.port,
      path: this.server.pathname.replace(/\/$/, '') + path,
      // A watch is a GET on the wire; it is counted apart, as the API server's own metrics count it.
      method: method === 'WATCH' ? 'GET' : method,
      agent: this.agent,
      headers: { accept: 'application/json', ...(payload !== undefined && contentType ? { 'content-type': contentType } : {}) },
      signal,
    };
    await this.credentials.apply(options);
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

/** A request given up on: not answered in time. */
export class ApiTimeout extends Error {
  constructor(what: string, ms: number) {
    super(`${what}: no answer within ${ms} ms`);
    this.name = 'ApiTimeout';
  }
}

/** A request given up because the work it served ended (a leadership term, a watch stopped). */
export class ApiAbandoned extends Error {
  constructor(what: string, reason: unknown) {
    super(`${what}: abandoned${reason instanceof Error ? ` (${reason.message})` : ''}`);
    this.name = 'ApiAbandoned';
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
