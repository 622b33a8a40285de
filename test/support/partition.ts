import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PEER_PORT } from '../../src/etcd/identity.js';
import { lab } from './lab.js';

const run = (args: string[]): string => execFileSync(args[0] ?? '', args.slice(1), { encoding: 'utf8', timeout: 10_000 });

/**
 * The network namespace holding a pod address: a file under one node's containerd state directory, where each
 * node's containerd keeps the namespaces of its pod sandboxes.
 */
export function netnsOf(ip: string): string {
  for (const node of lab().nodes) {
    const dir = join(dirname(node.containerdSocket), 'io.containerd.grpc.v1.cri', 'netns');
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const ns = join(dir, name);
      const addresses = run(['nsenter', `--net=${ns}`, 'ip', '-4', '-o', 'addr', 'show']);
      if (addresses.includes(` inet ${ip}/`)) return ns;
    }
  }
  throw new Error(`no pod network namespace holds ${ip}`);
}

const RULES = [['INPUT', '--dport'], ['OUTPUT', '--dport']] as const;

/**
 * Cuts a member off from its peers: inside its pod's network namespace, every packet to or from a peer port
 * is dropped, established connections included; clients still reach it. Answers the function that heals it.
 */
export function isolateFromPeers(podIP: string): () => void {
  const ns = netnsOf(podIP);
  const rule = (op: '-A' | '-D', [chain, port]: (typeof RULES)[number]): void => {
    run(['nsenter', `--net=${ns}`, 'iptables', op, chain, '-p', 'tcp', port, String(PEER_PORT), '-j', 'DROP']);
  };
  for (const r of RULES) rule('-A', r);
  let healed = false;
  return () => {
    if (healed) return;
    healed = true;
    for (const r of RULES) rule('-D', r);
  };
}
