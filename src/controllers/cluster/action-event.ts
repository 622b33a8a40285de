import type { Action } from '../../etcd/planner.js';

/** Actions a person should see as a Warning: a loss, a refusal, a recovery that costs data. */
const WARNINGS: Action['type'][] = ['QuorumLost', 'CorruptionUndecided', 'UpgradeRefused', 'StartRebuild', 'StartSurvivorRecovery', 'Blocked'];

/**
 * The type and reason of the Event that tells an action. A Blocked plan is told under its cause, the same
 * reason as its Degraded condition, so that an alert or `kubectl get events --field-selector reason=…` finds
 * what a person must do by name rather than under one word for all of them.
 */
export function actionEvent(action: Action): { type: 'Normal' | 'Warning'; reason: string } {
  return { type: WARNINGS.includes(action.type) ? 'Warning' : 'Normal', reason: action.type === 'Blocked' ? action.cause : action.type };
}
