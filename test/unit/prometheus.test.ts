import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from '../../src/runtime/prometheus.js';

test('counters, gauges and histograms are written in the text exposition format, labels escaped, in their label order', async () => {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({ name: 'requests_total', help: 'Requests.\nBy code.', labelNames: ['method', 'code'], registers });
  new Gauge({ name: 'leader', help: 'Leads.', registers });
  const phase = new Gauge({ name: 'phase', help: 'Phase.', labelNames: ['cluster'], registers });
  const time = new Histogram({ name: 'time_seconds', help: 'Time.', labelNames: ['controller'], buckets: [1, 0.1], registers });
  requests.inc({ code: '200', method: 'GET' });
  requests.inc({ method: 'GET', code: '200' }, 2);
  requests.inc({ method: 'PUT', code: '0' }, 0);
  phase.set({ cluster: 'a "b"\\c\nd' }, 1.5);
  time.observe({ controller: 'x' }, 0.05);
  time.observe({ controller: 'x' }, 0.5);
  time.observe({ controller: 'x' }, 7);
  assert.equal(await registry.metrics(), [
    '# HELP requests_total Requests.\\nBy code.', '# TYPE requests_total counter',
    'requests_total{method="GET",code="200"} 3', 'requests_total{method="PUT",code="0"} 0',
    '# HELP leader Leads.', '# TYPE leader gauge', 'leader 0',
    '# HELP phase Phase.', '# TYPE phase gauge', 'phase{cluster="a \\"b\\"\\\\c\\nd"} 1.5',
    '# HELP time_seconds Time.', '# TYPE time_seconds histogram',
    'time_seconds_bucket{controller="x",le="0.1"} 1', 'time_seconds_bucket{controller="x",le="1"} 2', 'time_seconds_bucket{controller="x",le="+Inf"} 3',
    'time_seconds_sum{controller="x"} 7.55', 'time_seconds_count{controller="x"} 3',
  ].join('\n') + '\n');
  assert.equal(registry.contentType, 'text/plain; version=0.0.4; charset=utf-8');
});

test('a series removed or reset is gone from the next scrape; a label the metric lacks, a counter going down, a name twice are refused', async () => {
  const registry = new Registry();
  const g = new Gauge({ name: 'g', help: 'G.', labelNames: ['cluster'], registers: [registry] });
  const c = new Counter({ name: 'c_total', help: 'C.', registers: [registry] });
  g.set({ cluster: 'a' }, 1);
  g.set({ cluster: 'b' }, 2);
  g.remove({ cluster: 'a' });
  c.inc(4);
  assert.deepEqual((await registry.metrics()).split('\n').filter((l) => !l.startsWith('#') && l !== ''), ['g{cluster="b"} 2', 'c_total 4']);
  g.reset();
  c.reset();
  assert.deepEqual((await registry.metrics()).split('\n').filter((l) => !l.startsWith('#') && l !== ''), ['c_total 0']);
  assert.throws(() => { g.set({ member: 'm-1' }, 1); }, /metric g has no label "member"/);
  assert.throws(() => { c.inc(-1); }, /cannot go down/);
  assert.throws(() => new Gauge({ name: 'g', help: 'again', registers: [registry] }), /registered already/);
});

test('a metric\'s collect runs at each scrape, on the metric; the process metrics are there and CPU time only grows', async () => {
  const registry = new Registry();
  let scrapes = 0;
  new Gauge({ name: 'scrapes', help: 'S.', registers: [registry], collect(this: Gauge) { this.set(++scrapes); } });
  collectDefaultMetrics({ register: registry });
  const value = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  const first = await registry.metrics();
  // CPU time to count, by the process's own clock (a busy machine gives a spin less CPU than wall time).
  const cpu = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
  const [from, giveUp] = [cpu(), Date.now() + 10_000];
  while (cpu() < from + 0.05 && Date.now() < giveUp) { /* spin */ }
  const second = await registry.metrics();
  assert.deepEqual([value(first, 'scrapes'), value(second, 'scrapes')], [1, 2]);
  for (const name of ['process_cpu_user_seconds_total', 'process_cpu_system_seconds_total', 'process_start_time_seconds', 'process_resident_memory_bytes',
    'process_heap_bytes', 'process_open_fds', 'process_max_fds', 'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes']) {
    assert.ok(value(second, name) > 0, `${name} is written: ${value(second, name)}`);
  }
  assert.ok(value(second, 'process_cpu_seconds_total') >= value(first, 'process_cpu_seconds_total') + 0.05, 'the spin counted');
  const total = value(second, 'process_cpu_user_seconds_total') + value(second, 'process_cpu_system_seconds_total');
  assert.ok(Math.abs(total - value(second, 'process_cpu_seconds_total')) < 1e-6, 'user plus system is the total');
  assert.match(second, /^process_resident_memory_bytes \d+$/m);
});

test('a collect that throws rejects that scrape instead of throwing to the endpoint', async () => {
  const registry = new Registry();
  new Gauge({ name: 'broken', help: 'B.', registers: [registry], collect() { throw new Error('cannot read'); } });
  let thrown: unknown;
  const scrape = ((): Promise<string> | undefined => { try { return registry.metrics(); } catch (e) { thrown = e; return undefined; } })();
  assert.equal(thrown, undefined, 'nothing thrown at the caller');
  await assert.rejects(scrape ?? Promise.resolve(''), /cannot read/);
});
