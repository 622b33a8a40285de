import { execFileSync } from 'node:child_process';
import { PEER_PORT } from '../../src/etcd/identity.js';

const run = (args: string[]): string => execFileSync(args[0] ?? '', args.slice(1), { encoding: 'utf8', timeout: 10_000 });

/** The network namespace (under /var/run/netns, where the CNI plugins put pod sandboxes) holding an address. */
export function netnsOf(ip: string): string {
  for (const ns of run(['ip', 'netns', 'list']).split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n !== '')) {
    const addresses = run(['ip', 'netns', 'exec', ns, 'ip', '-4', '-o', 'addr', 'show']);
    if (addresses.includes(` inet ${ip}/`)) return ns;
  }
  throw new Error(`no network namespace holds ${ip}`);
}

const RULES = [['INPUT', '--dport'], ['OUTPUT', '--dport']] as const;

/**
 * Cuts a member off from its peers: inside its pod's network namespace, every packet to or from a peer port
 * is dropped, established connections included; clients still reach it. Answers the function that heals it.
 */
export function isolateFromPeers(podIP: string): () => void {
  const ns = netnsOf(podIP);
  const rule = (op: '-A' | '-D', [chain, port]: (typeof RULES)[number]): void => {
    run(['ip', 'netns', 'exec', ns, 'iptables', op, chain, '-p', 'tcp', port, String(PEER_PORT), '-j', 'DROP']);
  };
  for (const r of RULES) rule('-A', r);
  let healed = false;
  return () => {
    if (healed) return;
    healed = true;
    for (const r of RULES) rule('-D', r);
  };
}
