import type { Condition } from '../../api/etcd-cluster.js';
import type { RetainedClaim } from '../../etcd/planner.js';

/**
 * Claims an earlier EtcdCluster of this name left that the running cluster did not take: an earlier
 * incarnation's (one incarnation is adopted, the newest), and those that say their member never ran. The operator
 * never deletes them: a "never ran" mark can be stale (the operator stopped while the member ran and took writes
 * straight to its pod), and an earlier incarnation may hold writes a person wants. Said in a condition, which
 * lasts, where the Event of the adoption expires within the hour; present only while such claims exist.
 */
export function leftClaimsCondition(bootstrapped: boolean, retained: RetainedClaim[]): Omit<Condition, 'lastTransitionTime'> | undefined {
  if (!bootstrapped || retained.length === 0) return undefined;
  const names = retained.map((c) => c.name).sort();
  const said = (c: RetainedClaim): string => `${c.name} (${c.neverRan ? 'says its member never ran' : `of cluster ${c.incarnation || 'unknown'}`})`;
  return {
    type: 'ClaimsLeft', status: 'True', reason: 'EarlierClaimsKept',
    message: `claims ${retained.map(said).sort().join(', ')} of an earlier EtcdCluster of this name are not used and not deleted: they may hold data `
      + `(a "never ran" mark can be stale if the operator was stopped while the member ran). Delete them once their data is not needed: kubectl delete pvc ${names.join(' ')}`,
  };
}
