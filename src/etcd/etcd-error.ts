/** A member refused or failed a call; `endpoint` says which. */
export class EtcdError extends Error {
  constructor(readonly endpoint: string, message: string, readonly status?: number) {
    super(`${endpoint}: ${message}`);
    this.name = 'EtcdError';
  }
}

/** etcd's answer for a revision compacted away (a read or a compaction at or below the compacted revision). */
export const compactedAway = (err: unknown): boolean => err instanceof EtcdError && /required revision has been compacted/.test(err.message);
