import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { nodeState } from '../../k8s/node-state.js';

const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/**
 * Claims whose volume only one node can reach, where a person declared that node shut down (the out-of-service
 * taint): no member will run on them again while it is (issue 32, finding 5). A local volume (local-path,
 * local PVs, LVM) is pinned to its node by the PersistentVolume's node affinity on the hostname; a network volume
 * (pinned to a zone, or not at all) attaches elsewhere and is never stranded. Without the person's word a lost node
 * strands nothing: it may be cut off with its members running, and they may be a majority.
 *
 * Read only while some node is declared shut down, so that a healthy cluster costs no request.
 */
export async function strandedClaims(
  claims: V1PersistentVolumeClaim[], anyShutDown: boolean,
  readNode: (name: string) => Promise<V1Node | undefined>, readVolume: (name: string) => Promise<V1PersistentVolume | undefined>,
): Promise<string[]> {
  if (!anyShutDown) return [];
  const stranded: string[] = [];
  for (const claim of claims) {
    const volume = claim.spec?.volumeName ? await readVolume(claim.spec.volumeName) : undefined;
    const node = volume ? pinnedNode(volume) : undefined;
    if (node && nodeState(await readNode(node)).shutDown) stranded.push(claim.metadata?.name ?? '');
  }
  return stranded;
}

/** The one node a volume's node affinity allows, by hostname; undefined for a volume other nodes can reach. */
export function pinnedNode(volume: V1PersistentVolume): string | undefined {
  const terms = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  const hosts = terms.map((t) => t.matchExpressions?.find((e) => e.key === HOSTNAME_LABEL && e.operator === 'In')?.values ?? []);
  // Every term (they are ORed) must name the same single host.
  const only = hosts[0];
  return only?.length === 1 && hosts.every((h) => h.length === 1 && h[0] === only[0]) ? only[0] : undefined;
}
