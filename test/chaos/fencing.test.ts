// Issue 16: one operator acts at a time. Two operator processes elect a leader on the lab's real API server,
// each through a relay of its own; the leader's relay turns into a black hole (nothing passes either way, no
// connection closes) for 60 s while its cluster scales.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { apiRelay } from '../support/api-relay.js';
import { testbed } from '../support/cluster-testbed.js';
import { loggedAt, startOperator } from '../support/operator-process.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { watchMembership } from '../support/chaos.js';
import { checkedLoad } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';

const CUT_MS = 60_000;

const logged = (operator: OperatorProcess, msg: string): number[] => loggedAt(operator.logs, msg);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('the leader\'s API connection black-holed for 60 s while its cluster scales: never two operators acting at once, and the cluster converges', async (t) => {
  const bed = await testbed(t, 'fencing');
  const relays = [await apiRelay(t), await apiRelay(t)] as const;
  const elect = ['--leader-elect', '--lease-namespace', bed.namespace];
  const first = startOperator(t, bed.namespace, elect, relays[0].url);
  await eventually('the first operator leads', 30_000, () => Promise.resolve(logged(first, 'leading')[0]));
  const second = startOperator(t, bed.namespace, elect, relays[1].url);
  const name = 'fenced';
  await bed.create(name, { size: 3 });
  await eventually('3 members', 180_000, () => bed.settledMembers(name, 3));
  const membership = watchMembership(t, bed, name);
  // Clients through the scale and the fence: two operators must never change the membership under them.
  const load = checkedLoad(bed, await bed.clientEndpoint(name), 'load');

  const scaledAt = Date.now();
  await bed.patchSpec(name, { size: 5 });
  // Cut off in the middle of the scale: once it has acted on it, with more to do.
  await eventually('the leader acting on the scale', 60_000, () => Promise.resolve(logged(first, 'acting').find((at) => at >= scaledAt)));
  relays[0].blackHole();
  const cutAt = Date.now();
  await sleep(CUT_MS);
  relays[0].heal();
  const healedAt = Date.now();
  await eventually('5 members', 240_000, () => bed.settledMembers(name, 5));
  // Whatever the old leader still had in hand would show by now.
  await sleep(10_000);
  const report = membership.stop();
  checkLoad(t, 'scaled through the fence', await load.finish());

  const successorLed = logged(second, 'leading')[0];
  assert.ok(successorLed !== undefined, 'the standby took over');
  const ended = logged(first, 'term ended; stopping its work')[0];
  const oldActs = logged(first, 'acting');
  const newActs = logged(second, 'acting');
  t.diagnostic(`cut ${cutAt - scaledAt} ms after the scale; old leader's term ended ${ended === undefined ? 'never' : `${ended - cutAt} ms`} after the cut; ` +
    `successor led ${successorLed - cutAt} ms after it; old leader acted ${oldActs.length} times, last ${Math.max(...oldActs) - cutAt} ms after the cut; ` +
    `successor acted ${newActs.length} times; heal at +${healedAt - cutAt} ms; membership samples ${report.samples}, most ${report.most}, most learners ${report.mostLearners}`);
  // Every breach is reported at once: which of them a regression shows says what it broke.
  const lateWrites = relays[0].sent.filter((r) => r.at >= successorLed && r.method !== 'GET').map((r) => `${r.method} ${r.path} at +${r.at - successorLed} ms`);
  const breaches = [
    ...(ended !== undefined && ended < successorLed ? [] : ['the old leader did not stop before its successor could lead']),
    ...oldActs.filter((at) => at >= successorLed).map((at) => `the old leader acted ${at - successorLed} ms after its successor led`),
    ...newActs.filter((at) => at < successorLed).map((at) => `the successor acted ${successorLed - at} ms before it led`),
    ...lateWrites.map((w) => `a write of the old leader reached the API server after its successor led: ${w}`),
  ];
  assert.deepEqual(breaches, [], 'one actor at a time');
  assert.ok(report.mostLearners <= 1, `never two membership changes at once (most learners ${report.mostLearners})`);
  assert.ok(report.most <= 5, `never more members than asked for (${report.most})`);
  first.succeeded();
  second.succeeded();
});
