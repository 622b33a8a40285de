import { execFileSync } from 'node:child_process';
import { lab } from './lab.js';

/** The lab's kubectl as the admin; stdout, or a thrown error with its stderr. */
export function kubectl(args: string[], input?: string): string {
  return execFileSync(lab().kubectl, ['--kubeconfig', lab().kubeconfig, ...args], { input, encoding: 'utf8', timeout: 60_000, stdio: ['pipe', 'pipe', 'pipe'] });
}
