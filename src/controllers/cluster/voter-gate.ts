import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMember } from '../../etcd/client.js';
import { memberName } from '../../etcd/client.js';
import { VOTER_GATE } from '../../k8s/member-pod.js';
import type { ApiTransport } from '../../runtime/transport.js';
import { ignoreStatus } from '../../runtime/transport.js';
import { rfc3339 } from '../../runtime/time.js';

/**
 * The pods whose voter gate is to be opened: the pod has the gate, it is not open yet, and etcd's member list
 * has the pod's member as a started voter. Opening it is safe on any member list, even a stale one: a member is
 * a voter from its promotion (or bootstrap) until it is removed, and a removed member's pod is deleted.
 */
export function gatesToOpen(pods: readonly V1Pod[], members: readonly EtcdMember[] | undefined): V1Pod[] {
  const voters = new Set((members ?? []).filter((m) => !m.isLearner && m.name !== '').map(memberName));
  return pods.filter((p) => !p.metadata?.deletionTimestamp
    && p.spec?.readinessGates?.some((g) => g.conditionType === VOTER_GATE)
    && !p.status?.conditions?.some((c) => c.type === VOTER_GATE && c.status === 'True')
    && voters.has(p.metadata?.name ?? ''));
}

/** Opens the gates: a strategic merge of the one condition, which leaves the kubelet's own conditions as they are. */
export async function openVoterGates(transport: ApiTransport, pods: readonly V1Pod[], nowMs: number): Promise<void> {
  for (const pod of pods) {
    const { namespace = '', name = '' } = pod.metadata ?? {};
    const condition = { type: VOTER_GATE, status: 'True', reason: 'Voter', message: 'the member is a voter: it serves clients', lastTransitionTime: rfc3339(nowMs) };
    await transport.call('PATCH', `/api/v1/namespaces/${namespace}/pods/${name}/status`, { status: { conditions: [condition] } }, 'application/strategic-merge-patch+json')
      .catch(ignoreStatus(404));
  }
}
