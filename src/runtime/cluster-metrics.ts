import { Counter, Gauge } from './prometheus.js';
import type { Registry } from './prometheus.js';
import type { HealthReading } from '../controllers/cluster/health-reading.js';

/** What the cluster controller reports of each EtcdCluster. */
export interface ClusterObserver {
  /** What a pass saw, after its status was written. */
  observed(namespace: string, cluster: string, r: HealthReading): void;
  /** A light look found the cluster as the last pass observed it: what that pass reported holds as of now. */
  confirmed(namespace: string, cluster: string): void;
  /** An action carried out (not one etcd refused for now). */
  acted(namespace: string, cluster: string, a: ActionTaken, atMs: number): void;
  /**
   * A pass that could not observe the cluster, stopped by its configuration (a Secret it names is missing): it is
   * degraded, and whether it serves is not known; what the last pass saw of it is not reported as now.
   */
  misconfigured(namespace: string, cluster: string): void;
  /** The EtcdCluster is gone: its series with it. */
  gone(namespace: string, cluster: string): void;
}

/** An action as the metrics count it. */
export interface ActionTaken {
  action: string;
  /** A member removed to be made again (failed, lost, stale), not one scaled away. */
  replacement: boolean;
  /** The alarms an action disarmed. */
  disarmed: string[];
}

const ALARMS = ['NOSPACE', 'CORRUPT'] as const;

interface Seen { phase?: string; action?: string; actions: Set<string>; leader?: string }

/** The label the operator's own metrics and the scraped members' share (the clusters' own Kubernetes label, too). */
const LABELS = ['namespace', 'etcd_cluster'];

/**
 * Each cluster's health as the leading operator last saw it, labelled by namespace and cluster only (never by member,
 * pod or revision: a cluster's series are few, and stay the same series across replacements). The series of a
 * cluster are dropped with it, and all of them when this process stops leading: a standby must not go on
 * reporting what it no longer looks at.
 */
export class ClusterMetrics {
  // Registered in the constructor: a field's initializer runs before a constructor parameter is assigned.
  private readonly gauge = (name: string, help: string, extra: string[] = []): Gauge =>
    new Gauge({ name: `etcd_operator_cluster_${name}`, help, labelNames: [...LABELS, ...extra], registers: [] });
  private readonly counter = (name: string, help: string, extra: string[] = []): Counter =>
    new Counter({ name: `etcd_operator_cluster_${name}`, help, labelNames: [...LABELS, ...extra], registers: [] });

  private readonly desired = this.gauge('members_desired', 'Members the spec asks for (spec.size).');
  private readonly ready = this.gauge('members_ready', 'Member pods ready.');
  private readonly voting = this.gauge('members_voting', 'Voting members in etcd\'s member list (0 while no member answers).');
  private readonly learners = this.gauge('members_learners', 'Learners (members catching up before they vote) in etcd\'s member list.');
  private readonly margin = this.gauge('quorum_margin',
    'Voters answering minus a quorum of them: 0 is one member loss from stopping, below 0 has stopped. Absent before the first bootstrap.');
  private readonly available = this.gauge('available', '1 while a quorum of voters follows one leader (condition Available).');
  private readonly degraded = this.gauge('degraded', '1 while the cluster is not as the spec asks (condition Degraded).');
  private readonly phase = this.gauge('phase', '1 for the cluster\'s current phase (status.phase).', ['phase']);
  private readonly alarms = this.gauge('alarms', 'Members raising each etcd alarm (NOSPACE, CORRUPT).', ['alarm']);
  private readonly rollPending = this.gauge('roll_members_pending',
    'Members a roll under way (a new version, settings or pod template) has still to make anew; 0 with none under way.');
  private readonly leaderChanges = this.counter('leader_changes_total', 'Changes of the agreed leader this operator saw between two passes.');
  private readonly actions = this.counter('actions_total', 'Actions taken on the cluster, by kind (AddMember, RemoveMember, DeletePod, ...).', ['action']);
  private readonly replacements = this.counter('member_replacements_total', 'Members removed to be made again (failed, lost, stale), not scaled away.');
  private readonly lastAction = this.gauge('last_action_timestamp_seconds', 'When the last action was taken, labelled by its kind.', ['action']);
  private readonly disarmed = this.counter('alarms_disarmed_total', 'Alarms the operator disarmed once it had recovered from them (NOSPACE), by alarm.', ['alarm']);
  private readonly observedAt = this.gauge('observed_timestamp_seconds', 'When a pass last observed the cluster, or a light look found it unchanged: its other series are as of then.');

  /** Per "namespace/cluster": the series of a further label it has (to replace or drop them), and the leader last seen. */
  private readonly seen = new Map<string, Seen>();

  constructor(registry: Registry) {
    for (const m of [...this.plain(), ...this.labelled()]) registry.registerMetric(m);
  }

  readonly observer: ClusterObserver = {
    observed: (namespace, cluster, r) => {
      const labels = { namespace, etcd_cluster: cluster };
      const seen = this.record(namespace, cluster);
      this.desired.set(labels, r.desired);
      this.ready.set(labels, r.ready);
      this.voting.set(labels, r.voting);
      this.learners.set(labels, r.learners);
      if (r.quorumMargin === undefined) this.margin.remove(labels);
      else this.margin.set(labels, r.quorumMargin);
      this.available.set(labels, r.available ? 1 : 0);
      this.degraded.set(labels, r.degraded ? 1 : 0);
      if (seen.phase !== undefined && seen.phase !== r.phase) this.phase.remove({ ...labels, phase: seen.phase });
      this.phase.set({ ...labels, phase: r.phase }, 1);
      seen.phase = r.phase;
      for (const alarm of ALARMS) {
        this.alarms.set({ ...labels, alarm }, r.alarms[alarm]);
        // From 0, so that the first disarm is an increase too.
        this.disarmed.inc({ ...labels, alarm }, 0);
      }
      this.observedAt.set(labels, Date.now() / 1000);
      this.rollPending.set(labels, r.rollPending);
      // Counted from leader to leader: a pass with no leader in between (an election under way) is no change yet.
      this.leaderChanges.inc(labels, 0);
      if (r.leader !== undefined) {
        if (seen.leader !== undefined && seen.leader !== r.leader) this.leaderChanges.inc(labels);
        seen.leader = r.leader;
      }
    },
    confirmed: (namespace, cluster) => {
      if (this.seen.has(`${namespace}/${cluster}`)) this.observedAt.set({ namespace, etcd_cluster: cluster }, Date.now() / 1000);
    },
    acted: (namespace, cluster, { action, replacement, disarmed }, atMs) => {
      const labels = { namespace, etcd_cluster: cluster };
      const seen = this.record(namespace, cluster);
      this.actions.inc({ ...labels, action });
      seen.actions.add(action);
      this.replacements.inc(labels, replacement ? 1 : 0);
      for (const alarm of disarmed) this.disarmed.inc({ ...labels, alarm });
      if (seen.action !== undefined && seen.action !== action) this.lastAction.remove({ ...labels, action: seen.action });
      this.lastAction.set({ ...labels, action }, atMs / 1000);
      seen.action = action;
    },
    misconfigured: (namespace, cluster) => {
      const labels = { namespace, etcd_cluster: cluster };
      this.degraded.set(labels, 1);
      for (const m of [this.available, this.margin]) m.remove(labels);
    },
    gone: (namespace, cluster) => {
      const labels = { namespace, etcd_cluster: cluster };
      const seen = this.record(namespace, cluster);
      this.seen.delete(`${namespace}/${cluster}`);
      for (const m of this.plain()) m.remove(labels);
      if (seen.phase !== undefined) this.phase.remove({ ...labels, phase: seen.phase });
      if (seen.action !== undefined) this.lastAction.remove({ ...labels, action: seen.action });
      for (const alarm of ALARMS) {
        this.alarms.remove({ ...labels, alarm });
        this.disarmed.remove({ ...labels, alarm });
      }
      for (const action of seen.actions) this.actions.remove({ ...labels, action });
    },
  };

  /** Drops every cluster's series: this process no longer leads, so it no longer knows. */
  reset(): void {
    this.seen.clear();
    for (const m of [...this.plain(), ...this.labelled()]) m.reset();
  }

  private record(namespace: string, cluster: string): Seen {
    const key = `${namespace}/${cluster}`;
    const found = this.seen.get(key);
    if (found) return found;
    const made: Seen = { actions: new Set() };
    this.seen.set(key, made);
    return made;
  }

  /** The metrics with a further label (phase, alarm, action). */
  private labelled(): (Gauge | Counter)[] {
    return [this.phase, this.alarms, this.actions, this.lastAction, this.disarmed];
  }

  /** The metrics labelled by namespace and cluster alone. */
  private plain(): (Gauge | Counter)[] {
    return [this.desired, this.ready, this.voting, this.learners, this.margin, this.available, this.degraded, this.rollPending, this.leaderChanges, this.replacements, this.observedAt];
  }
}
