/**
 * A snapshot cut into the fixed-size parts of a multipart upload, copied into a few buffers that are used
 * again and again. Holding etcd's 32 KiB chunks until a part was full (what the SDK's Upload does, and then
 * joins them) kept them alive long enough to reach the old generation: on the 2-core lab the operator spent
 * more CPU collecting and copying them than receiving, hashing and sending together. One copy into a reused
 * buffer lets every chunk die young.
 */

/** Buffers of one size, made only when needed and at most `count` of them: `take` waits for one given back. */
export class BufferPool {
  private readonly free: Buffer[] = [];
  private readonly waiting: ((b: Buffer) => void)[] = [];
  private made = 0;

  constructor(readonly size: number, readonly count: number) {}

  take(): Promise<Buffer> {
    const ready = this.free.pop();
    if (ready) return Promise.resolve(ready);
    if (this.made < this.count) {
      this.made++;
      // Not from Node's shared slab: each buffer is its own memory, given back whole. Untouched pages of an
      // unfilled one (a small object) are never resident.
      return Promise.resolve(Buffer.allocUnsafeSlow(this.size));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Gives back a buffer `take` handed out (or a view of it, as a last short part is). */
  give(part: Buffer): void {
    const whole = Buffer.from(part.buffer, 0, this.size);
    const next = this.waiting.shift();
    if (next) next(whole);
    else this.free.push(whole);
  }
}

/**
 * The bytes as parts of exactly `pool.size` bytes, the last one shorter (empty if the source was). Each part
 * is a buffer of the pool, which its consumer gives back once sent; while none is free the source is not read.
 */
export async function* filledParts(source: AsyncIterable<Uint8Array>, pool: BufferPool): AsyncGenerator<Buffer> {
  let part = await pool.take();
  let held = 0;
  for await (const chunk of source) {
    let at = 0;
    while (at < chunk.length) {
      const n = Math.min(chunk.length - at, pool.size - held);
      part.set(chunk.subarray(at, at + n), held);
      held += n;
      at += n;
      if (held === pool.size) {
        yield part;
        part = await pool.take();
        held = 0;
      }
    }
  }
  yield part.subarray(0, held);
}
