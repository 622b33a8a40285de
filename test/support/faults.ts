import type { TestContext } from 'node:test';
import { labCommand } from './lab.js';

/** Faults the lab injects and heals (lab/fault.sh says exactly what each one does). */
export type Fault =
  | { kind: 'node-kill' | 'node-partition'; node: string }
  | { kind: 'zone-outage'; zone: string }
  | { kind: 'apiserver-blackhole'; node?: string }
  | { kind: 'slow-member'; pod: string; namespace: string; cpuMillisPerSecond?: number }
  | { kind: 'hang'; pod: string; namespace: string }
  | { kind: 'fill-volume'; claim: string; namespace: string };

const target = (f: Fault): string[] => {
  switch (f.kind) {
    case 'node-kill': case 'node-partition': return [f.node];
    case 'zone-outage': return [f.zone];
    case 'apiserver-blackhole': return f.node === undefined ? [] : [f.node];
    case 'slow-member': return [`${f.namespace}/${f.pod}`, ...(f.cpuMillisPerSecond === undefined ? [] : [String(f.cpuMillisPerSecond)])];
    case 'fill-volume': return [`${f.namespace}/${f.claim}`];
    case 'hang': return [`${f.namespace}/${f.pod}`];
  }
};

/**
 * Injects a fault, healed when the test ends if it has not been before. Answers the function that heals it
 * (idempotent).
 */
export async function inject(t: TestContext, fault: Fault): Promise<() => Promise<void>> {
  const [first = '', ...rest] = target(fault);
  const args = [fault.kind, first, ...rest];
  let healed = false;
  const heal = async (): Promise<void> => {
    if (healed) return;
    healed = true;
    await labCommand(['heal', fault.kind, first]);
  };
  t.after(heal);
  await labCommand(['fault', ...args]);
  return heal;
}

/** Power-cycles a node: every process on it killed at once, then its runtime started again. */
export async function rebootNode(node: string): Promise<void> {
  await labCommand(['fault', 'node-reboot', node]);
}

/** Empties a claim's volume under the pod using it. */
export async function wipeVolume(namespace: string, claim: string): Promise<void> {
  await labCommand(['fault', 'wipe-volume', `${namespace}/${claim}`]);
}

/** Rots a member's data in place, under the running etcd: every copy of `text` in its database is overwritten. */
export async function corruptData(namespace: string, claim: string, text: string): Promise<string> {
  return labCommand(['fault', 'corrupt-data', `${namespace}/${claim}`, text]);
}

/** Kills every process of a pod's containers at once (SIGKILL), as a crash; the kubelet starts them again. */
export async function crashPod(namespace: string, pod: string): Promise<void> {
  await labCommand(['fault', 'crash', `${namespace}/${pod}`]);
}
