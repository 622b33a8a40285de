import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { SnapshotFrames } from '../../src/etcd/snapshot-frames.js';
import { grpcSnapshot, grpcTimeout } from '../../src/etcd/snapshot-grpc.js';

const varint = (n: number): number[] => {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) { out.push((v % 128) | 0x80); v = Math.floor(v / 128); }
  out.push(v);
  return out;
};
const field = (num: number, wire: number, body: number[]): number[] => [...varint((num << 3) | wire), ...body];
const bytes = (num: number, b: Buffer): number[] => field(num, 2, [...varint(b.length), ...b]);

/** A SnapshotResponse as etcd sends it (header, remaining_bytes, blob, version), in its gRPC frame. */
function response(blob: Buffer, remaining: number): Buffer {
  const header = Buffer.from(field(1, 0, varint(123456789)).concat(field(3, 0, varint(42))));
  const message = Buffer.from([...bytes(1, header), ...field(2, 0, varint(remaining)), ...(blob.length ? bytes(3, blob) : []), ...bytes(4, Buffer.from('3.6.5')), ...field(5, 1, [1, 2, 3, 4, 5, 6, 7, 8]), ...field(6, 5, [1, 2, 3, 4])]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** The blobs `frames` finds in `stream` cut at `cuts` (offsets), joined. */
function read(stream: Buffer, cuts: number[]): Buffer {
  const frames = new SnapshotFrames();
  const out: Buffer[] = [];
  let at = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < stream.length)].sort((a, b) => a - b).concat(stream.length)) {
    out.push(...frames.feed(stream.subarray(at, cut)));
    at = cut;
  }
  frames.finish();
  return Buffer.concat(out);
}

test('snapshot frames: the blobs of every response, in order, wherever the stream is cut; the other fields skipped', () => {
  fc.assert(fc.property(
    fc.array(fc.integer({ min: 0, max: 600 }), { minLength: 1, maxLength: 6 }),
    fc.array(fc.nat(), { maxLength: 20 }),
    (sizes, cutSeeds) => {
      const blobs = sizes.map((n) => randomBytes(n));
      const stream = Buffer.concat(blobs.map((b, i) => response(b, 2 ** 33 - i)));
      const cuts = cutSeeds.map((c) => c % (stream.length + 1));
      assert.ok(read(stream, cuts).equals(Buffer.concat(blobs)));
    },
  ), { numRuns: 300 });
});

test('snapshot frames: a stream cut inside a message, a compressed message, or two blobs in one message are refused', () => {
  const whole = response(randomBytes(100), 0);
  for (const end of [3, 5, 40, whole.length - 1]) assert.throws(() => read(whole.subarray(0, end), []), /cut off inside a message/, `cut at ${end}`);
  const compressed = Buffer.from(whole);
  compressed[0] = 1;
  assert.throws(() => read(compressed, []), /compressed/);
  const twice = Buffer.from([...bytes(3, Buffer.from('ab')), ...bytes(3, Buffer.from('cd'))]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(twice.length, 1);
  assert.throws(() => read(Buffer.concat([prefix, twice]), []), /two blobs/);
  const overrun = Buffer.from([...bytes(3, Buffer.from('abcdef'))]);
  prefix.writeUInt32BE(overrun.length - 2, 1);
  assert.throws(() => read(Buffer.concat([prefix, overrun]), []), /past the end of its message/);
});

test('the snapshot call\'s deadline in gRPC\'s timeout header: at most 8 digits', () => {
  assert.equal(grpcTimeout(600_000), '600000m');
  assert.equal(grpcTimeout(99_999_999), '99999999m');
  assert.equal(grpcTimeout(100_000_000), '100000S');
  assert.equal(grpcTimeout(1.5), '2m');
});

test('a snapshot whose member goes silent mid-stream fails within its stall bound; time the reader spends on what it got does not count', async () => {
  const { createServer } = await import('node:http2');
  const first = response(randomBytes(1000), 5000);
  const server = createServer();
  // Sends one response, then nothing: a member frozen in the middle of its snapshot.
  server.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.write(first);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    const started = Date.now();
    let received = 0;
    await assert.rejects((async () => {
      for await (const blob of grpcSnapshot(`http://127.0.0.1:${port}`, { stallMs: 300 })) {
        received += blob.length;
        // A slow reader (an upload) holds the stream longer than the bound: the member is not to blame for that.
        await new Promise((r) => setTimeout(r, 600));
      }
    })(), /sent nothing for 300 ms/);
    assert.equal(received, 1000, 'what came before the silence was passed on');
    const tookMs = Date.now() - started;
    assert.ok(tookMs >= 900 && tookMs < 3000, `failed after the reader's 600 ms and the 300 ms bound (${tookMs} ms)`);
  } finally {
    server.close();
  }
});
