import type { ClusterStatus, Condition } from '../../api/etcd-cluster.js';
import { TROUBLE_REASONS } from './pod-trouble.js';

/**
 * Conditions that, in these states, are also an Event: a Warning for a fault of the spec or of the nodes, or a
 * shared failure domain; a Normal one for spec fields that are accepted and do nothing.
 */
const TOLD_CONDITIONS: [string, (c: Condition) => boolean, 'Normal' | 'Warning'][] = [
  ['Degraded', (c) => c.status === 'True' && [...TROUBLE_REASONS, 'Refused'].some((r) => r === c.reason), 'Warning'],
  ['MembersSpread', (c) => c.status === 'False', 'Warning'],
  ['UnusedFields', (c) => c.status === 'True', 'Normal'],
  ['ClaimsLeft', (c) => c.status === 'True', 'Normal'],
  // A growth the StorageClass refuses, or one waiting for restarts, is for a person; one under way is not.
  ['VolumeGrowth', (c) => c.reason === 'ExpansionRefused' || c.reason === 'FileSystemResizePending', 'Warning'],
];

export interface ConditionEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * The Events a status write calls for: each told condition once as it appears or changes (reason or message),
 * not on every pass. So a spec field that does nothing is told once per cluster, again only if it changes.
 */
export function conditionEvents(before: ClusterStatus | undefined, after: ClusterStatus | undefined): ConditionEvent[] {
  return TOLD_CONDITIONS.flatMap(([type, told, eventType]) => {
    const [was, is] = [before, after].map((x) => x?.conditions?.find((c) => c.type === type));
    if (!is || !told(is) || (is.reason === was?.reason && is.message === was?.message)) return [];
    return [{ type: eventType, reason: is.reason ?? '', message: is.message ?? '' }];
  });
}
