import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue } from '../../src/runtime/workqueue.js';
import { ExponentialBackoff } from '../../src/runtime/rate-limit.js';

const queue = (): WorkQueue => new WorkQueue(new ExponentialBackoff(10, 1000));

test('a key added several times before it is taken is processed once', async () => {
  const q = queue();
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.length, 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.length, 0);
});

test('a key added while it is processed is not handed out again until done', async () => {
  const q = queue();
  q.add('a');
  const first = await q.get();
  q.add('a');
  assert.equal(q.length, 0, 'not queued while a worker holds it');
  let second: string | undefined;
  const waiting = q.get().then((k) => (second = k));
  await new Promise((r) => setImmediate(r));
  assert.equal(second, undefined, 'a second worker does not get the key in flight');
  q.done(first ?? '');
  await waiting;
  assert.equal(second, 'a', 'queued again once done');
});

test('an idle worker is woken by an add', async () => {
  const q = queue();
  const taken = q.get();
  q.add('x');
  assert.equal(await taken, 'x');
});

test('delayed adds fire after their delay and keep the earliest due time', async () => {
  const q = queue();
  q.addAfter('a', 60_000);
  q.addAfter('a', 20);
  q.addAfter('a', 50_000);
  assert.equal(q.length, 0);
  const started = Date.now();
  assert.equal(await q.get(), 'a');
  assert.ok(Date.now() - started < 10_000, 'the 20 ms due time won over the later ones');
  await q.shutDown(false);
});

test('rate-limited adds back off per key and forget resets', async () => {
  const q = queue();
  q.addRateLimited('a');
  q.addRateLimited('a');
  assert.equal(q.failures('a'), 2);
  assert.equal(await q.get(), 'a');
  q.forget('a');
  assert.equal(q.failures('a'), 0);
  q.done('a');
});

test('shutdown wakes idle workers with nothing and drain waits for keys in flight', async () => {
  const q = queue();
  q.add('busy');
  const busy = await q.get();
  const idle = q.get();
  let drained = false;
  const shutdown = q.shutDown(true).then(() => (drained = true));
  assert.equal(await idle, undefined);
  q.add('late');
  assert.equal(q.length, 0, 'no adds after shutdown');
  await new Promise((r) => setImmediate(r));
  assert.equal(drained, false, 'still draining while a key is in flight');
  q.done(busy ?? '');
  await shutdown;
  assert.equal(drained, true);
  assert.equal(await q.get(), undefined);
});

test('drain completes even when the key in flight was re-added before shutdown', async () => {
  const q = queue();
  q.add('a');
  const a = await q.get();
  q.add('a');
  const shutdown = q.shutDown(true);
  q.done(a ?? '');
  await shutdown;
  // Unlike client-go's queue: what was queued when the term ended is the next leader's to do, not this one's.
  assert.equal(await q.get(), undefined, 'the re-added key is not handed out after shutdown');
});

test('observer sees adds, depth, retries and queue latency', async () => {
  const seen = { added: 0, retried: 0, depth: [] as number[], waited: 0 };
  const q = new WorkQueue(new ExponentialBackoff(1, 10), {
    added: () => seen.added++,
    retried: () => seen.retried++,
    depth: (d) => seen.depth.push(d),
    waited: () => seen.waited++,
  });
  q.add('a');
  q.add('b');
  q.add('a');
  await q.get();
  q.addRateLimited('c');
  assert.equal(seen.added, 2);
  assert.equal(seen.retried, 1);
  assert.deepEqual(seen.depth, [1, 2, 1]);
  assert.equal(seen.waited, 1);
  await q.shutDown(false);
});

test('a queue shutting down hands out none of the keys still queued: an ended term starts nothing new', async () => {
  const q = queue();
  q.add('first');
  q.add('second');
  const first = await q.get();
  const shutdown = q.shutDown(true);
  assert.equal(await q.get(), undefined, 'the queued key is not taken');
  q.done(first ?? '');
  await shutdown;
  assert.equal(await q.get(), undefined);
});

test('a key taken only because its delayed add came due is timed only; one a change added since is not, even if its timer came too', async () => {
  const q = queue();
  q.add('a');
  assert.equal(await q.get(), 'a');
  assert.equal(q.timedOnly('a'), false, 'first added by a change');
  q.addAfter('a', 5);
  q.done('a');
  assert.equal(await q.get(), 'a');
  assert.equal(q.timedOnly('a'), true, 'nothing but its requeue');
  q.done('a');
  assert.equal(q.timedOnly('a'), false, 'forgotten once done');
  q.addAfter('a', 5);
  q.add('a');
  assert.equal(await q.get(), 'a');
  assert.equal(q.timedOnly('a'), false, 'a change came before its timer');
  q.add('a');
  q.done('a');
  assert.equal(await q.get(), 'a');
  assert.equal(q.timedOnly('a'), false, 'a change came while it was worked on');
  q.done('a');
});
