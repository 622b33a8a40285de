/** When a key may be retried, given its history: how client-go's workqueue rate limiters behave. */
export interface RateLimiter {
  /** Milliseconds to wait before this key's next attempt; each call counts as one more failure. */
  when(key: string): number;
  /** Resets the key's failure history (call after a success). */
  forget(key: string): void;
  /** How many failures the key has had since it was last forgotten. */
  failures(key: string): number;
}

/** baseMs · 2^failures, capped at maxMs, per key. */
export class ExponentialBackoff implements RateLimiter {
  private readonly failureCounts = new Map<string, number>();

  constructor(private readonly baseMs: number, private readonly maxMs: number) {}

  when(key: string): number {
    const failures = this.failureCounts.get(key) ?? 0;
    this.failureCounts.set(key, failures + 1);
    // 2^failures overflows to Infinity long after the cap applies; min() keeps the result finite.
    return Math.min(this.baseMs * 2 ** failures, this.maxMs);
  }

  forget(key: string): void {
    this.failureCounts.delete(key);
  }

  failures(key: string): number {
    return this.failureCounts.get(key) ?? 0;
  }
}

/**
 * A token bucket shared by all keys (an overall retry rate): `ratePerSecond` tokens a second, at most
 * `burst` saved. Each call reserves the next free token and says how long until it is free.
 */
export class TokenBucket implements RateLimiter {
  private tokens: number;
  private updatedAt: number;

  constructor(private readonly ratePerSecond: number, private readonly burst: number, private readonly now: () => number = Date.now) {
    this.tokens = burst;
    this.updatedAt = now();
  }

  when(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.ratePerSecond);
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.updatedAt) * this.ratePerSecond) / 1000);
    this.updatedAt = now;
  }

  /** Takes a token if one is free now; never reserves one in advance. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  forget(): void {
    // A shared bucket has no per-key history.
  }

  failures(): number {
    return 0;
  }
}

/** The slowest answer of several limiters, as client-go's MaxOfRateLimiter. */
export class MaxOf implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  failures(key: string): number {
    return Math.max(...this.limiters.map((l) => l.failures(key)));
  }
}

/** client-go's default controller rate limiter, with a lower cap: an operator should retry within minutes. */
export function defaultControllerRateLimiter(): RateLimiter {
  return new MaxOf(new ExponentialBackoff(5, 5 * 60_000), new TokenBucket(10, 100));
}
