import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { lab } from './lab.js';

const run = promisify(execFile);

/** The lab's kubectl as the admin; stdout, or a thrown error with its stderr. */
export function kubectl(args: string[], input?: string): string {
  return execFileSync(lab().kubectl, ['--kubeconfig', lab().kubeconfig, ...args], { input, encoding: 'utf8', timeout: 60_000, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** kubectl as the admin without blocking the event loop (a write load keeps running meanwhile); stdout, or a rejection with its stderr. */
export async function kubectlAsync(args: string[], timeoutMs: number): Promise<string> {
  const { stdout } = await run(lab().kubectl, ['--kubeconfig', lab().kubeconfig, ...args], { encoding: 'utf8', timeout: timeoutMs });
  return stdout;
}
