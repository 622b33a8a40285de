import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkHistory } from './linearizability.js';
import type { Recording } from './recorded-workload.js';
import { revisionAnomalies } from './revision-order.js';
import { unwrittenReads, watchAnomalies } from './watch-checks.js';

/** What a checked recording showed, for the test's report (describeHistory). */
export interface HistorySummary {
  operations: number;
  checked: number;
  /** Operations whose outcome stayed unknown (a timeout, a cut connection). */
  unknown: number;
  watchEvents: number;
  resumes: number;
  /** Where the history, the checker's timeline and any anomaly are written. */
  artifacts: string;
  /** What is wrong, when anything is: an anomaly (its smallest part), watch anomalies, or a check not decided in time. */
  anomaly?: string;
}

/** Kept beside the operators' logs when a run keeps those (OPERATOR_LOG_DIR), else under the temporary directory. */
const artifactsDir = (name: string): string => join(process.env.OPERATOR_LOG_DIR ?? join(tmpdir(), 'etcd-operator-histories'), name);

/** Fewer operations checked than this is a load that did not get through, not a history that held. */
const MIN_CHECKED = 50;

/**
 * Checks a recording: the clients' history for linearizability (lab/checker, porcupine), the revisions etcd
 * answered for real-time order across keys (revisionAnomalies), and the watchers' events against it
 * (watchAnomalies). Writes the history, the checker's timeline and its answer under the artifacts
 * directory. An anomaly is in the answer, with the smallest anomalous part of the history, for checkLoad to fail
 * the test on after it has reported the load.
 */
export async function checkRecording(recording: Recording, name: string): Promise<HistorySummary> {
  const dir = artifactsDir(name);
  // checkHistory makes the folder.
  const verdict = await checkHistory(recording.history, dir, 'clients');
  const watched = [...watchAnomalies(recording.history.operations, recording.watchers), ...unwrittenReads(recording.history.operations)];
  const ordered = revisionAnomalies(recording.history.operations);
  writeFileSync(join(dir, 'watchers.json'), JSON.stringify({ watchers: recording.watchers, anomalies: watched }));
  const summary: HistorySummary = {
    operations: verdict.operations,
    checked: verdict.checked,
    unknown: recording.history.operations.filter((o) => o.outcome.type === 'unknown').length,
    watchEvents: recording.watchers.reduce((n, w) => n + w.events.length, 0),
    resumes: recording.watchers.reduce((n, w) => n + w.resumes, 0),
    artifacts: dir,
  };
  // The whole verdict beside the history: the message below is cut short.
  writeFileSync(join(dir, 'clients.verdict.json'), JSON.stringify(verdict));
  const silent = recording.watchers.findIndex((w) => w.events.length === 0);
  if (verdict.result !== 'ok') {
    const shown = JSON.stringify(verdict.anomalies ?? []).slice(0, 4000);
    summary.anomaly = `the clients' history is ${verdict.result === 'illegal' ? 'not linearizable' : 'not decided in time'}: ${shown} (timeline: ${verdict.visualization ?? 'none'}; the whole verdict: ${dir}/clients.verdict.json)`;
  } else if (verdict.checked < MIN_CHECKED) {
    // A load whose every call failed, or that never ran, would pass every check below with nothing in it.
    summary.anomaly = `only ${verdict.checked} of ${verdict.operations} operations could be checked (at least ${MIN_CHECKED} must be): the clients did not get through`;
  } else if (silent >= 0) {
    summary.anomaly = `watcher ${silent} got no event in ${recording.watchers[silent]?.resumes ?? 0} resumes: a watch that never worked has nothing to check`;
  } else if (ordered.length > 0) {
    summary.anomaly = `${ordered.length} answers at a revision below one returned before they began: ${ordered.slice(0, 10).join('; ')}`;
  } else if (watched.length > 0) {
    summary.anomaly = `${watched.length} watch anomalies: ${watched.slice(0, 10).join('; ')} (${dir}/watchers.json)`;
  }
  return summary;
}

/** One line for the run's report: how much was checked, and that it held. */
export const describeHistory = (h: HistorySummary): string => (h.anomaly === undefined
  ? `${h.checked} of ${h.operations} operations of concurrent clients checked linearizable, their revisions in real-time order (${h.unknown} unanswered), `
    + `${h.watchEvents} watch events in order with no gap (${h.resumes} resumes); ${h.artifacts}`
  : `${h.checked} of ${h.operations} operations of concurrent clients checked (${h.unknown} unanswered), ${h.watchEvents} watch events: ${h.anomaly}`);
