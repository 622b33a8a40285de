import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { lab } from './lab.js';

const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface OperatorProcess {
  logs: string[];
  /** SIGKILL, as a crash: no cleanup, no lease release. */
  kill(): Promise<void>;
}

/** The operator as a real process on the host, watching one namespace; stopped (by its PID) when the test ends. */
export function startOperator(t: TestContext, namespace: string): OperatorProcess {
  const logs: string[] = [];
  const port = 20000 + Math.floor(Math.random() * 10000);
  const child = spawn(process.execPath, [cli, 'run', '--kubeconfig', lab().kubeconfig, '--namespace', namespace,
    '--dns-server', lab().dnsServer, '--metrics-address', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (chunk: Buffer): void => { logs.push(...chunk.toString('utf8').split('\n').filter((l) => l.trim() !== '')); };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  return { logs, kill };
}
