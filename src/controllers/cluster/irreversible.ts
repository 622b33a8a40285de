import type { Action } from '../../etcd/planner.js';

/** Actions that cannot be undone: each is confirmed on a fresh observation before it is taken. */
const IRREVERSIBLE: Action['type'][] = ['Bootstrap', 'ResumeBootstrap', 'Adopt', 'TakeOver', 'RecordTakeover', 'RemoveMember', 'DeleteClaim', 'SetClaimAside', 'DisarmAlarms', 'StartRebuild', 'StartSurvivorRecovery', 'RestartSurvivor'];
/**
 * A forced pod deletion drops the pod object while its containers may still run: it must be of a removed member.
 * A pod deleted for not being a member is judged by the member list alone, which may lag (a member just added):
 * a member's pod deleted on that mistake loses what it held without a volume.
 */
export const irreversible = (a: Action): boolean => IRREVERSIBLE.includes(a.type) || (a.type === 'DeletePod' && (a.force === true || a.notMember === true));
