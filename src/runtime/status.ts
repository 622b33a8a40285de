import { isDeepStrictEqual } from 'node:util';
import { ApiError } from './transport.js';
import type { ApiTransport } from './transport.js';
import type { KubeObject } from './store.js';

export interface WithStatus<S> extends KubeObject {
  status?: S;
}

/**
 * Writes an object's status through its status subresource. `computeStatus` derives the status from an
 * object; it runs first on `cached` and, after a 409 Conflict, again on a fresh read, so a status is always
 * written against the resourceVersion it was computed from. Returns the object the server answered with,
 * or undefined when there is nothing to write: computeStatus returned undefined, or the status it computed is
 * the one stored (idle objects cost no API requests).
 */
export async function writeStatus<S, T extends WithStatus<S>>(
  transport: ApiTransport,
  objectPath: string,
  cached: T,
  computeStatus: (current: T) => S | undefined,
  attempts = 5,
): Promise<T | undefined> {
  let current = cached;
  for (let attempt = 1; ; attempt++) {
    const status = computeStatus(current);
    if (status === undefined || sameContent(status, current.status)) return undefined;
    try {
      return (await transport.call('PUT', `${objectPath}/status`, { ...current, status })) as T;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409) || attempt >= attempts) throw err;
      current = (await transport.call('GET', objectPath)) as T;
    }
  }
}

/**
 * The same JSON, whatever the order of keys: the API server answers with keys sorted, while a computed status
 * has them in the order the code built it; a property set to undefined is no property, as in JSON.
 */
function sameContent(a: unknown, b: unknown): boolean {
  const json = (x: unknown): unknown => (x === undefined ? undefined : JSON.parse(JSON.stringify(x)));
  return isDeepStrictEqual(json(a), json(b));
}
