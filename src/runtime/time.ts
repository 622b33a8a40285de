/** A Lease timestamp: RFC 3339 with microseconds, the MicroTime format the API server requires. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** An RFC 3339 timestamp to the second, as metav1.Time fields (conditions, Event timestamps) carry them. */
export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
