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
 * or undefined when computeStatus returned undefined (nothing to write).
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
    if (status === undefined) return undefined;
    try {
      return (await transport.call('PUT', `${objectPath}/status`, { ...current, status })) as T;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409) || attempt >= attempts) throw err;
      current = (await transport.call('GET', objectPath)) as T;
    }
  }
}
