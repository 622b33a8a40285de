import type { ClusterStatus } from '../../api/etcd-cluster.js';
import type { Action, ClusterState } from '../../etcd/planner.js';
import { countAnswering, quorum, votersOf } from '../../etcd/planner.js';
import { rollUnderWay } from './status.js';
import type { ActionTaken } from '../../runtime/cluster-metrics.js';

/**
 * What a pass saw of a cluster's health, in numbers, for its metrics: the same observation its status was written
 * from, so that a dashboard and `kubectl get` never tell two stories.
 */
export interface HealthReading {
  desired: number;
  ready: number;
  /** Voters in etcd's member list (0 while no member answers: none is known to vote). */
  voting: number;
  learners: number;
  /**
   * Voters answering minus a quorum of them: 1 or more can lose one, 0 is one loss from stopping, below 0 has
   * stopped. Undefined before the first bootstrap (nothing to lose yet).
   */
  quorumMargin?: number;
  available: boolean;
  degraded: boolean;
  phase: string;
  leader?: string;
  /** Members raising each alarm. */
  alarms: { NOSPACE: number; CORRUPT: number };
  /** Members a roll under way (version, settings, template) has still to make anew; 0 with none under way. */
  rollPending: number;
}

export function healthReading(s: ClusterState, status: ClusterStatus): HealthReading {
  const voters = votersOf(s.members);
  // Without a member list, the voters are those recorded: none answering them is a quorum lost, not "no voters".
  const known = s.members ? voters.length : Math.max(s.recordedMembers.length, status.membership?.length ?? 0, s.desiredSize);
  const answering = s.members ? countAnswering(voters, s.health) : 0;
  const condition = (type: string): boolean => status.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
  const roll = rollUnderWay(s);
  return {
    desired: s.desiredSize,
    ready: status.readyMembers ?? 0,
    voting: voters.length,
    learners: (s.members ?? []).filter((m) => m.isLearner).length,
    ...(status.bootstrapped ? { quorumMargin: answering - quorum(known) } : {}),
    available: condition('Available'),
    degraded: condition('Degraded'),
    phase: status.phase ?? '',
    ...(status.leader ? { leader: status.leader } : {}),
    alarms: { NOSPACE: s.alarms.filter((a) => a.alarm === 'NOSPACE').length, CORRUPT: s.alarms.filter((a) => a.alarm === 'CORRUPT').length },
    rollPending: roll ? roll.of - roll.rolled : 0,
  };
}

/** An action as the metrics count it: a member removed to be made again, not because the spec asks for fewer; alarms disarmed. */
export const actionTaken = (s: ClusterState, action: Action): ActionTaken => ({
  action: action.type,
  replacement: action.type === 'RemoveMember' && votersOf(s.members).length <= s.desiredSize,
  disarmed: action.type === 'DisarmAlarms' ? [...new Set(action.alarms.map((a) => a.alarm))] : [],
});
