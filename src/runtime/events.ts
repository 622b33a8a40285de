import { randomBytes } from 'node:crypto';
import { ApiError } from './transport.js';
import type { ApiTransport } from './transport.js';
import { TokenBucket } from './rate-limit.js';
import { rfc3339 } from './time.js';

export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
}

export interface EventRecorderOptions {
  /** source.component and reportingController of every event. */
  component: string;
  /** reportingInstance, e.g. the pod name. */
  instance: string;
  /** Events per object allowed in a burst, then one per `refillSeconds` (client-go: 25, then 1 per 5 min). */
  burst?: number;
  refillSeconds?: number;
  onError?(err: unknown): void;
}

interface Emitted { name: string; count: number }

const MAX_REMEMBERED = 4096;

/**
 * core/v1 Events with client-go's two protections against a hot loop flooding the API server: a repeat of
 * the same event (object, type, reason, message) updates the existing Event's count and lastTimestamp
 * instead of creating a new one, and each object has a token bucket beyond which events are dropped.
 */
export class EventRecorder {
  private readonly emitted = new Map<string, Emitted>();
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly transport: ApiTransport, private readonly options: EventRecorderOptions) {}

  async record(object: InvolvedObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    if (!this.bucket(object.uid).tryTake()) return;
    const key = [object.uid, type, reason, message].join('\u0000');
    const now = rfc3339(Date.now());
    const path = `/api/v1/namespaces/${object.namespace}/events`;
    try {
      const seen = this.emitted.get(key);
      if (seen && (await this.bump(path, seen, now))) return;
      const name = `${object.name}.${randomBytes(8).toString('hex')}`;
      await this.transport.call('POST', path, {
        metadata: { name, namespace: object.namespace },
        involvedObject: object, type, reason, message,
        source: { component: this.options.component },
        reportingComponent: this.options.component, reportingInstance: this.options.instance,
        firstTimestamp: now, lastTimestamp: now, eventTime: null, count: 1,
      });
      this.remember(key, { name, count: 1 });
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  /** Counts one more occurrence on the existing Event; false when it has expired meanwhile. */
  private async bump(path: string, seen: Emitted, now: string): Promise<boolean> {
    try {
      await this.transport.call('PATCH', `${path}/${seen.name}`, { count: seen.count + 1, lastTimestamp: now }, 'application/merge-patch+json');
      seen.count++;
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      throw err;
    }
  }

  private remember(key: string, emitted: Emitted): void {
    this.emitted.set(key, emitted);
    if (this.emitted.size > MAX_REMEMBERED) this.emitted.delete(this.emitted.keys().next().value ?? key);
  }

  private bucket(uid: string): TokenBucket {
    let bucket = this.buckets.get(uid);
    if (!bucket) {
      bucket = new TokenBucket(1 / (this.options.refillSeconds ?? 300), this.options.burst ?? 25);
      this.buckets.set(uid, bucket);
      if (this.buckets.size > MAX_REMEMBERED) this.buckets.delete(this.buckets.keys().next().value ?? uid);
    }
    return bucket;
  }
}
