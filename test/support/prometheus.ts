import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { TestContext } from 'node:test';
import { scrapeJobs } from '../../src/install/scrape-config.js';
import { alertRules } from '../../src/install/alert-rules.js';
import type { RuleTimings } from '../../src/install/alert-rules.js';
import { eventually, lab, labTool } from './lab.js';
import { freePort } from './free-port.js';
import { owned, stopChild } from './child-stop.js';

/** The shipped rules with holds of seconds: a fault is held for a minute here, not for the minutes a page waits. */
export const QUICK: RuleTimings = { holdFor: () => 6, rpoTargetSeconds: 20, staleSlackSeconds: 10, reconcileWindowSeconds: 120 };

export interface Alert { labels: Record<string, string>; state: 'pending' | 'firing'; value: string }
export interface Sample { metric: Record<string, string>; value: [number, string] }

export interface Prometheus {
  /** The instant vector an expression answers now (empty: no data). */
  query(expr: string): Promise<Sample[]>;
  /** The alerts Prometheus' own API lists, pending and firing. */
  alerts(): Promise<Alert[]>;
  /** Active targets by job: their scrape URL and health. */
  targets(): Promise<{ job: string; url: string; health: string; labels: Record<string, string> }[]>;
}

/**
 * A real Prometheus on the host, scraping the lab by the shipped scrape jobs (deploy/monitoring/prometheus-scrape.yaml)
 * and evaluating the shipped alert rules with `timings` (the test's short holds). The jobs get only what a
 * Prometheus outside the cluster needs: the lab's kubeconfig, and the test's namespace (another test's clusters are
 * not this test's to see). Scraped every 2 s; stopped by its PID and its data removed when the test ends.
 */
export async function startPrometheus(t: TestContext, namespace: string, timings: RuleTimings): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
  writeFileSync(join(dir, 'rules.yaml'), stringify(alertRules(timings)));
  const jobs = scrapeJobs().map((j) => ({
    ...j, kubernetes_sd_configs: j.kubernetes_sd_configs.map((sd) => ({ ...sd, kubeconfig_file: lab().kubeconfig, namespaces: { names: [namespace] } })),
  }));
  writeFileSync(join(dir, 'prometheus.yaml'), stringify({
    global: { scrape_interval: '2s', scrape_timeout: '1s', evaluation_interval: '2s' }, rule_files: [join(dir, 'rules.yaml')], scrape_configs: jobs,
  }));
  const port = await freePort();
  const logs: string[] = [];
  const child = owned(spawn(await labTool('prometheus'), [
    `--config.file=${join(dir, 'prometheus.yaml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
  ], { stdio: ['ignore', 'pipe', 'pipe'] }));
  child.stdout.on('data', (c: Buffer) => logs.push(c.toString()));
  child.stderr.on('data', (c: Buffer) => logs.push(c.toString()));
  t.after(async () => {
    await stopChild(child);
    // Logged at warn: whatever it says is worth reading beside a failure.
    if (logs.length > 0) t.diagnostic(`prometheus log: ${logs.join('').slice(-2000)}`);
    rmSync(dir, { recursive: true, force: true });
  });
  const base = `http://127.0.0.1:${port}`;
  await eventually(`Prometheus ready (${logs.join('').slice(-300)})`, 60_000, async () =>
    ((await fetch(`${base}/-/ready`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined))?.ok ? true : undefined));
  const api = async <T>(path: string): Promise<T> => {
    // Bounded: a Prometheus that hangs fails the wait that asked, not the whole test's time.
    const res = await fetch(`${base}/api/v1/${path}`, { signal: AbortSignal.timeout(15_000) });
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    query: async (expr) => (await api<{ result: Sample[] }>(`query?query=${encodeURIComponent(expr)}`)).result,
    alerts: async () => (await api<{ alerts: Alert[] }>('alerts')).alerts,
    targets: async () => (await api<{ activeTargets: { scrapePool: string; scrapeUrl: string; health: string; labels: Record<string, string> }[] }>('targets?state=active'))
      .activeTargets.map((x) => ({ job: x.scrapePool, url: x.scrapeUrl, health: x.health, labels: x.labels })),
  };
}

/** The names of the alerts firing (not only pending) for the test's namespace, or of none (the operator's own). */
export async function firing(prom: Prometheus): Promise<string[]> {
  return [...new Set((await prom.alerts()).filter((a) => a.state === 'firing').map((a) => a.labels.alertname ?? ''))].sort();
}

/** Waits until each of `alerts` fires; answers how long that took. */
export async function untilFiring(prom: Prometheus, alerts: string[], timeoutMs: number): Promise<number> {
  const started = Date.now();
  let seen: string[] = [];
  await eventually(`${alerts.join(', ')} firing`, timeoutMs, async () => {
    seen = await firing(prom);
    return alerts.every((a) => seen.includes(a)) || undefined;
  }, () => `firing: ${seen.join(', ') || 'none'}`);
  return Date.now() - started;
}

/** Waits until none of `alerts` is pending or firing. */
export async function untilResolved(prom: Prometheus, alerts: string[], timeoutMs: number): Promise<number> {
  const started = Date.now();
  let left: string[] = [];
  await eventually(`${alerts.join(', ')} resolved`, timeoutMs, async () => {
    left = (await prom.alerts()).map((a) => a.labels.alertname ?? '').filter((a) => alerts.includes(a));
    return left.length === 0 || undefined;
  }, () => `still active: ${left.join(', ')}`);
  return Date.now() - started;
}
