/** A Lease timestamp: RFC 3339 with microseconds, the MicroTime format the API server requires. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** An RFC 3339 timestamp to the second, as metav1.Time fields (conditions, Event timestamps) carry them. */
export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A Kubernetes time (a Date as typed, an RFC 3339 string as it comes from the API) in milliseconds; 0 if absent. */
export const timeMs = (t: Date | string | undefined): number => (t ? new Date(t).getTime() || 0 : 0);
