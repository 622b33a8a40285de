import { readFileSync, readdirSync } from 'node:fs';

/**
 * Prometheus metrics in its text exposition format (0.0.4): counters, gauges and histograms with labels, a
 * registry that writes them, and the standard process metrics. Written here rather than loaded: prom-client and
 * what it brings (OpenTelemetry's API, a t-digest, the cluster module for an aggregator we do not use) were,
 * with pino, the last CommonJS packages the operator loaded at start (2.7 MiB of RSS together). Its option and
 * method names are kept, so the metrics read as they did.
 */

export type Labels = Record<string, string>;

interface MetricOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** The registries it is written by (none: registered later, by registerMetric). */
  registers?: Registry[];
  /** Sets values worked out at each scrape, called on the metric before it is written. */
  collect?: (this: never) => void;
}

/** Something a registry writes: its HELP, TYPE and sample lines. */
interface Exposed {
  readonly name: string;
  /** Brings values computed at scrape time up to date. */
  collect(): void;
  lines(): string[];
}

const escapeHelp = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeValue = (s: string): string => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function sampleValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function labelText(pairs: [string, string][]): string {
  return pairs.length === 0 ? '' : `{${pairs.map(([k, v]) => `${k}="${escapeValue(v)}"`).join(',')}}`;
}

/** A metric's series, one per combination of its labels' values. */
abstract class Metric<T> implements Exposed {
  readonly name: string;
  protected readonly labelNames: readonly string[];
  protected readonly series = new Map<string, { labels: [string, string][]; value: T }>();

  private readonly collector: (() => void) | undefined;

  protected constructor(private readonly type: string, private readonly help: string, o: MetricOptions) {
    this.name = o.name;
    this.labelNames = o.labelNames ?? [];
    this.collector = o.collect?.bind(this as never);
    for (const r of o.registers ?? []) r.registerMetric(this);
  }

  collect(): void {
    this.collector?.();
  }

  /** Drops the series of these labels' values. */
  remove(labels: Labels): void {
    this.series.delete(this.keyOf(labels).key);
  }

  /** Drops every series (a metric without labels starts again from its initial value). */
  reset(): void {
    this.series.clear();
  }

  lines(): string[] {
    return [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`,
      ...[...this.series.values()].flatMap(({ labels, value }) => this.samples(labels, value))];
  }

  protected abstract samples(labels: [string, string][], value: T): string[];

  /** The series of these labels' values, made with `initial` if new. A label the metric does not have is refused. */
  protected seriesOf(labels: Labels, initial: () => T): { labels: [string, string][]; value: T } {
    const { key, pairs } = this.keyOf(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels: pairs, value: initial() };
      this.series.set(key, s);
    }
    return s;
  }

  private keyOf(labels: Labels): { key: string; pairs: [string, string][] } {
    for (const k of Object.keys(labels)) {
      if (!this.labelNames.includes(k)) throw new Error(`metric ${this.name} has no label "${k}" (it has: ${this.labelNames.join(', ')})`);
    }
    const pairs = this.labelNames.filter((k) => labels[k] !== undefined).map((k): [string, string] => [k, String(labels[k])]);
    return { key: JSON.stringify(pairs), pairs };
  }
}

/** A metric of one number a series; one without labels is written from its start, at 0. */
abstract class NumberMetric extends Metric<number> {
  protected constructor(type: string, o: MetricOptions) {
    super(type, o.help, o);
    this.startUnlabelled();
  }

  override reset(): void {
    super.reset();
    this.startUnlabelled();
  }

  protected samples(labels: [string, string][], value: number): string[] {
    return [`${this.name}${labelText(labels)} ${sampleValue(value)}`];
  }

  private startUnlabelled(): void {
    if (this.labelNames.length === 0) this.seriesOf({}, () => 0);
  }
}

/** A count that only grows; a series given `inc(labels, 0)` is shown at 0 before its first event. */
export class Counter extends NumberMetric {
  constructor(o: MetricOptions) {
    super('counter', o);
  }

  inc(labelsOrValue?: Labels | number, value = 1): void {
    const [labels, by] = typeof labelsOrValue === 'number' ? [{}, labelsOrValue] : [labelsOrValue ?? {}, value];
    if (!(by >= 0)) throw new Error(`counter ${this.name} cannot go down (by ${by})`);
    this.seriesOf(labels, () => 0).value += by;
  }
}

/** A value that goes up and down. */
export class Gauge extends NumberMetric {
  constructor(o: MetricOptions) {
    super('gauge', o);
  }

  set(labelsOrValue: Labels | number, value?: number): void {
    const [labels, v] = typeof labelsOrValue === 'number' ? [{}, labelsOrValue] : [labelsOrValue, value ?? 0];
    this.seriesOf(labels, () => 0).value = v;
  }
}

interface Observations { counts: number[]; sum: number; count: number }

/** Observations counted into cumulative buckets, with their sum and count. */
export class Histogram extends Metric<Observations> {
  private readonly buckets: number[];

  constructor(o: MetricOptions & { buckets: number[] }) {
    super('histogram', o.help, o);
    this.buckets = [...o.buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    const s = this.seriesOf(labels, () => ({ counts: this.buckets.map(() => 0), sum: 0, count: 0 })).value;
    this.buckets.forEach((upper, i) => { if (value <= upper) s.counts[i] = (s.counts[i] ?? 0) + 1; });
    s.sum += value;
    s.count += 1;
  }

  protected samples(labels: [string, string][], o: Observations): string[] {
    const bucket = (le: string, n: number): string => `${this.name}_bucket${labelText([...labels, ['le', le]])} ${n}`;
    return [...this.buckets.map((upper, i) => bucket(sampleValue(upper), o.counts[i] ?? 0)), bucket('+Inf', o.count),
      `${this.name}_sum${labelText(labels)} ${sampleValue(o.sum)}`, `${this.name}_count${labelText(labels)} ${o.count}`];
  }
}

/** The metrics one /metrics endpoint writes. */
export class Registry {
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  private readonly registered = new Map<string, Exposed>();

  registerMetric(m: Exposed): void {
    if (this.registered.has(m.name)) throw new Error(`metric ${m.name} is registered already`);
    this.registered.set(m.name, m);
  }

  /**
   * Every metric's lines, as a scrape reads them. A collect that throws rejects that scrape (the endpoint answers
   * 500); it never throws to the caller, whose request handler would otherwise end the process.
   */
  metrics(): Promise<string> {
    try {
      const all = [...this.registered.values()];
      for (const m of all) m.collect();
      return Promise.resolve(`${all.flatMap((m) => m.lines()).join('\n')}\n`);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

/** Open file descriptors, where /proc says (Linux). */
function openFileDescriptors(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

/** The process's limit on open file descriptors, where /proc says (Linux). */
function maxFileDescriptors(): number | undefined {
  try {
    const max = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return max === undefined ? undefined : Number(max);
  } catch {
    return undefined;
  }
}

/**
 * The process metrics every Prometheus client library writes under these names (CPU, memory, file
 * descriptors, start time), and Node's heap: what the dashboard's operator row and generic process alerts read.
 */
export function collectDefaultMetrics(o: { register: Registry }): void {
  const registers = [o.register];
  const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
  const cpuUser = new Counter({ name: 'process_cpu_user_seconds_total', help: 'User CPU time spent in seconds.', registers });
  const cpuSystem = new Counter({ name: 'process_cpu_system_seconds_total', help: 'System CPU time spent in seconds.', registers });
  // The three are read at once, by the total's collect, so that user plus system is the total at every scrape.
  const counted = { user: 0, system: 0 };
  new Counter({
    name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers,
    collect(this: Counter) {
      const { user, system } = process.cpuUsage();
      cpuUser.inc((user - counted.user) / 1e6);
      cpuSystem.inc((system - counted.system) / 1e6);
      this.inc((user - counted.user + system - counted.system) / 1e6);
      Object.assign(counted, { user, system });
    },
  });
  const gauge = (name: string, help: string, value: () => number | undefined): Gauge => new Gauge({
    name, help, registers, collect(this: Gauge) { const v = value(); if (v !== undefined) this.set(v); },
  });
  gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', () => startSeconds);
  // Memory is read once a scrape, by the first of its gauges (collected in the order registered), as the CPU is.
  let memory = process.memoryUsage();
  gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => (memory = process.memoryUsage()).rss);
  gauge('process_heap_bytes', 'Process heap size in bytes.', () => memory.heapTotal);
  gauge('process_open_fds', 'Number of open file descriptors.', openFileDescriptors);
  gauge('process_max_fds', 'Maximum number of open file descriptors.', maxFileDescriptors);
  gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', () => memory.heapUsed);
  gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', () => memory.external);
}
