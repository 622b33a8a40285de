import type { ChildProcess } from 'node:child_process';

/** The processes this test process started and that still run. */
const running = new Set<ChildProcess>();
let guarded = false;

/**
 * A process a test starts (an operator, MinIO, Prometheus, an API server, a log follower) never outlives the test
 * file's process. A file that runs past its bound is ended by the runner with SIGTERM and its after hooks never run:
 * a cold run's timed-out alert-faults left its MinIO running to the end, and a left operator would go on acting on
 * the lab. SIGTERM now ends this process through exit, which kills whatever it started.
 */
export function owned<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (!guarded) {
    guarded = true;
    process.once('exit', () => { for (const c of running) c.kill('SIGKILL'); });
    process.once('SIGTERM', () => { process.exit(143); });
  }
  return child;
}

/**
 * Stops a process the test started, by its own process handle: `signal` (SIGTERM: a clean stop; SIGKILL: a crash),
 * then SIGKILL after 10 s; resolves once it has exited.
 */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
