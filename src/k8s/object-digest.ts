import { createHash } from 'node:crypto';

/** The value with every object's keys in order and undefined fields left out: the same content, the same text. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, canonical(v)]));
}

/**
 * A short digest of a JSON value that does not depend on the order of its objects' keys (a spec read back from
 * the API server may list them in another order than it was written): recorded on pods, compared with the spec's.
 */
export const objectDigest = (value: unknown): string => createHash('sha256').update(JSON.stringify(canonical(value))).digest('hex').slice(0, 16);
