/** A member refused or failed a call; `endpoint` says which. */
export class EtcdError extends Error {
  constructor(readonly endpoint: string, message: string, readonly status?: number) {
    super(`${endpoint}: ${message}`);
    this.name = 'EtcdError';
  }
}
