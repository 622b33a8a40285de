import { spawn } from 'node:child_process';
import { owned, stopChild } from './child-stop.js';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { eventually, lab } from './lab.js';
import { operatorKubeconfig } from './operator-identity.js';
import { OPERATOR_NODE_FLAGS } from '../../src/install/operator-command.js';

/** A JSON log line of the operator's, or undefined for any other line. */
const parseLine = (line: string): { msg?: string; address?: { port?: number } } | undefined => {
  try { return JSON.parse(line) as { msg?: string; address?: { port?: number } }; } catch { return undefined; }
};

const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface OperatorProcess {
  logs: string[];
  pid: number;
  /** Its /metrics endpoint, once it listens (on a port the kernel chose, so that operators never collide). */
  metricsUrl(): Promise<string>;
  /** SIGTERM, then SIGKILL after 10 s: a clean stop. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash: no cleanup, no lease release. */
  kill(): Promise<void>;
}

/** The operator as a real process on the host, on the lab; one namespace, or all when none is given. */
export function spawnOperator(namespace?: string, extraArgs: string[] = [], kubeconfig = lab().kubeconfig): OperatorProcess {
  const logs: string[] = [];
  const child = owned(spawn(process.execPath, [...OPERATOR_NODE_FLAGS, cli, 'run', '--kubeconfig', kubeconfig, ...(namespace ? ['--namespace', namespace] : ['--cluster-wide']),
    '--dns-server', lab().dnsServer, '--metrics-address', '127.0.0.1:0', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const collect = (chunk: Buffer): void => { logs.push(...chunk.toString('utf8').split('\n').filter((l) => l.trim() !== '')); };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const metricsUrl = (): Promise<string> => eventually('the operator listening', 30_000, () => {
    const started = logs.map((l) => parseLine(l)).find((l) => l?.msg === 'etcd-operator started');
    return Promise.resolve(started?.address?.port === undefined ? undefined : `http://127.0.0.1:${started.address.port}/metrics`);
  });
  return { logs, pid: child.pid ?? 0, metricsUrl, stop: () => stopChild(child), kill: () => stopChild(child, 'SIGKILL') };
}

export interface TestOperator extends OperatorProcess {
  /** Marks the test as through: its logs are no longer worth showing. */
  succeeded(): void;
}

/**
 * spawnOperator for one test's namespace, with the rights the shipped namespaced RBAC gives it and no others
 * (its own ServiceAccount's token), through `serverUrl` when given, stopped (by its PID) when the test ends; unless the test called
 * succeeded(), the operator's last log lines go into the test's diagnostics.
 */
export function startOperator(t: TestContext, namespace: string, extraArgs: string[] = [], serverUrl?: string): TestOperator {
  const operator = spawnOperator(namespace, extraArgs, operatorKubeconfig(t, namespace, serverUrl));
  let through = false;
  t.after(async () => {
    if (!through) t.diagnostic(operator.logs.slice(-40).join('\n'));
    // Kept whole, for a failure whose cause is further back than the diagnostics' last lines.
    const dir = process.env['OPERATOR_LOG_DIR'];
    if (dir) {
      mkdirSync(dir, { recursive: true });
      appendFileSync(join(dir, `${namespace}.log`), `${operator.logs.join('\n')}\n`);
    }
    await operator.stop();
  });
  return { ...operator, succeeded: () => { through = true; } };
}

/** What a test reads of an operator's log line. */
export interface LogEntry { msg?: string; time?: string; key?: string; action?: { type?: string; reason?: string } }

/** When (ms since the epoch) an operator logged each of its lines with this message (and, if given, that `where` holds of). */
export const loggedAt = (lines: string[], msg: string, where: (entry: LogEntry) => boolean = () => true): number[] => lines.flatMap((line) => {
  try {
    const entry = JSON.parse(line) as LogEntry;
    return entry.msg === msg && entry.time && where(entry) ? [Date.parse(entry.time)] : [];
  } catch {
    return [];
  }
});
