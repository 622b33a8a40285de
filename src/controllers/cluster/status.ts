import { specVersion } from '../../api/etcd-cluster.js';
import type { ClusterStatus, Condition, EtcdCluster } from '../../api/etcd-cluster.js';
import type { Action, ClusterState } from '../../etcd/planner.js';
import { answering, quorum, votersOf } from '../../etcd/planner.js';
import { CLIENT_PORT } from '../../etcd/identity.js';
import { clusterLabels, labelSelector } from '../../k8s/labels.js';

/** Sets a condition, keeping its lastTransitionTime unless its status changes. */
function condition(previous: Condition[] | undefined, c: Omit<Condition, 'lastTransitionTime'>, now: string): Condition {
  const before = previous?.find((p) => p.type === c.type);
  return { ...c, lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime : now };
}

const BUSY: Action['type'][] = ['Bootstrap', 'ResumeBootstrap', 'CreatePod', 'AddMember', 'PromoteLearner', 'RemoveMember', 'MoveLeader', 'DeletePod', 'Wait'];

/** The status a reconcile reports: what was observed, and what it is doing about it. */
export function clusterStatus(cluster: EtcdCluster, s: ClusterState, action: Action, versions: string[], now: string): ClusterStatus {
  const prev = cluster.status;
  const bootstrapped = s.bootstrapped || action.type === 'MarkBootstrapped';
  const voters = votersOf(s.members);
  const healthyVoters = answering(voters, s.health);
  const available = bootstrapped && voters.length > 0 && healthyVoters >= quorum(voters.length);
  const memberNames = new Set(s.members?.map((m) => m.name));
  const memberPods = s.pods.filter((p) => memberNames.has(p.name) && !p.terminating);
  const ready = memberPods.filter((p) => p.ready).map((p) => p.name).sort();
  const unready = [...memberNames].filter((n) => !ready.includes(n)).sort();
  const leader = s.health.find((h) => h.isLeader)?.name;
  const target = specVersion(cluster.spec);
  const current = versions.length > 0 ? [...versions].sort()[0] : prev?.currentVersion;
  const busy = BUSY.includes(action.type);
  const detail = 'reason' in action ? action.reason : action.type;
  const phase = action.type === 'Paused' ? 'Paused'
    : action.type === 'QuorumLost' ? 'Failed'
    : !bootstrapped ? 'Creating'
    : voters.length !== s.desiredSize ? 'Scaling'
    : busy || unready.length > 0 ? 'Recovering'
    : 'Running';
  const generation = cluster.metadata.generation;
  return {
    phase,
    ...(action.type === 'QuorumLost' ? { reason: action.reason } : {}),
    controlPaused: action.type === 'Paused',
    observedGeneration: generation,
    bootstrapped,
    size: voters.length,
    readyMembers: ready.length,
    selector: labelSelector(clusterLabels(cluster.metadata.name)),
    members: { ready, unready },
    ...(leader ? { leader } : {}),
    ...(current ? { currentVersion: current } : {}),
    targetVersion: target,
    serviceName: `${cluster.metadata.name}-client`,
    clientPort: CLIENT_PORT,
    conditions: [
      condition(prev?.conditions, available
        ? { type: 'Available', status: 'True', reason: 'QuorumHealthy', message: `${healthyVoters} of ${voters.length} members healthy` }
        : { type: 'Available', status: 'False', reason: bootstrapped ? 'NoQuorum' : 'Bootstrapping', message: detail }, now),
      condition(prev?.conditions, busy
        ? { type: 'Progressing', status: 'True', reason: action.type, message: detail }
        : { type: 'Progressing', status: 'False', reason: action.type, message: detail }, now),
      condition(prev?.conditions, action.type === 'QuorumLost' || unready.length > 0
        ? { type: 'Degraded', status: 'True', reason: action.type === 'QuorumLost' ? 'QuorumLost' : 'MembersUnready', message: action.type === 'QuorumLost' ? action.reason : `unready: ${unready.join(', ')}` }
        : { type: 'Degraded', status: 'False', reason: 'AllMembersReady', message: 'all members ready' }, now),
    ].map((c) => ({ ...c, observedGeneration: generation })),
  };
}
