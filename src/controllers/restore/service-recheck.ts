/**
 * How a restore looks again when all its cluster lacks is the client Service's answer. Nothing the operator
 * watches tells when the nodes' proxies route a Service to its ready endpoints: a rule sync after the last member
 * became Ready (or after the Service was made, whichever came later), about a second. Until then a connection is
 * refused, or its SYN dropped and sent again by the kernel only a second later (seen: a look that timed out after
 * 2 s, the next answered in 3 ms).
 */

/** How often, and for how long after the Service could first be routed. */
export const SERVICE_RECHECK_MS = 250;
export const SERVICE_RECHECK_FOR_MS = 15_000;
/**
 * Within that time each look is a new connection bounded in its connecting: one not made by then was sent before
 * the route came, and the next look's is routed. Once connected, a member's answer may take the client's whole
 * timeout, so a loaded member is not taken for an unrouted one.
 */
export const SERVICE_CONNECT_WITHIN_MS = 300;
/** A start further ahead of the operator's clock than this is another clock's (a node's) skew, not a time to wait from. */
const SKEW_MS = 1000;

export interface ServiceRecheck {
  /** When to look again, if sooner than a restore's usual pace. */
  recheckInMs?: number;
  /** The bound on the next look's connecting. */
  connectWithinMs?: number;
}

/**
 * Looks every 250 ms with connections bounded at 300 ms for 15 s from `routableSinceMs`; after that (or from a start
 * skewed ahead) at the usual pace and with the client's own timeout: an operator whose connections are slow to
 * make, outside the cluster say, is never told for ever that the Service does not answer.
 */
export function serviceRecheck(routableSinceMs: number, nowMs: number): ServiceRecheck {
  const since = nowMs - routableSinceMs;
  if (since < -SKEW_MS || since >= SERVICE_RECHECK_FOR_MS) return {};
  return { recheckInMs: SERVICE_RECHECK_MS, connectWithinMs: SERVICE_CONNECT_WITHIN_MS };
}
