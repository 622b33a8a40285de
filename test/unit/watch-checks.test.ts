import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unwrittenReads, watchAnomalies } from '../support/watch-checks.js';
import type { WatchRecord } from '../support/watch-checks.js';
import type { Operation, WatchEvent } from '../support/history.js';

const put = (key: string, value: string, revision: number, call: number): Operation => ({ client: 0, input: { f: 'put', key, value }, call, return: call + 1, outcome: { type: 'ok', revision } });
const cas = (key: string, value: string, revision: number, succeeded: boolean): Operation => ({ client: 1, input: { f: 'cas', key, expect: null, value }, call: revision * 10, return: revision * 10 + 1, outcome: { type: 'ok', succeeded, revision } });
const unknownPut = (key: string, value: string): Operation => ({ client: 2, input: { f: 'put', key, value }, call: 5, return: null, outcome: { type: 'unknown', error: 'timed out' } });
const ev = (revision: number, key: string, value?: string): WatchEvent => (value === undefined ? { revision, key, type: 'delete' } : { revision, key, type: 'put', value });
const watcher = (events: WatchEvent[], compacted: WatchRecord['compacted'] = []): WatchRecord => ({ events, compacted, resumes: 0 });

const del = (key: string, revision: number): Operation => ({ client: 0, input: { f: 'delete', key }, call: 3, return: 4, outcome: { type: 'ok', deleted: 1, revision } });
const history = [put('a', 'v1', 10, 1), put('b', 'v2', 11, 2), cas('a', 'v3', 12, true), cas('b', 'v4', 12, false), del('b', 13), put('a', 'v5', 14, 4), unknownPut('b', 'v6')];
const everything = [ev(10, 'a', 'v1'), ev(11, 'b', 'v2'), ev(12, 'a', 'v3'), ev(13, 'b'), ev(14, 'a', 'v5'), ev(15, 'b', 'v6')];

test('watchers that got every acknowledged write once, in order, agreeing: no anomaly (a delete and an unanswered put included)', () => {
  assert.deepEqual(watchAnomalies(history, [watcher(everything), watcher(everything.slice(2))]), []);
});

test('an event delivered twice, or after a later one, is an anomaly', () => {
  const twice = [...everything.slice(0, 3), ev(12, 'a', 'v3'), ...everything.slice(3)];
  assert.match(watchAnomalies(history, [watcher(twice)]).join('\n'), /revision 12 of a delivered twice/);
  const back = [everything[0], everything[2], everything[1], ...everything.slice(3)].filter((e): e is WatchEvent => e !== undefined);
  assert.match(watchAnomalies(history, [watcher(back)]).join('\n'), /revision 11 of b after revision 12/);
});

test('an acknowledged write missing between revisions a watcher saw is a gap, unless etcd said it had compacted it', () => {
  const gap = everything.filter((e) => e.revision !== 12);
  assert.match(watchAnomalies(history, [watcher(gap)]).join('\n'), /put of a = v3 at revision 12 \(the client wrote it\) never came, between revisions 10 and 15/);
  assert.deepEqual(watchAnomalies(history, [watcher(gap, [{ from: 11, through: 12 }])]), []);
  assert.match(watchAnomalies(history, [watcher(gap, [{ from: 13, through: 14 }])]).join('\n'), /never came/, 'a compaction elsewhere excuses nothing');
});

test('watchers told different things at one revision, an event unlike the write: anomalies', () => {
  const other = everything.map((e) => (e.revision === 14 ? ev(14, 'a', 'v1') : e));
  const found = watchAnomalies(history, [watcher(everything), watcher(other)]).join('\n');
  assert.match(found, /revision 14 of a is .* where another watcher got/);
  assert.match(found, /revision 14 of a is .* where the client wrote v5/);
});

test('a delete, or an unanswered write one watcher got, missed by another is a gap; a watcher ending short of the last acknowledged write and a value nobody wrote are anomalies', () => {
  const found = watchAnomalies(history, [watcher(everything), watcher(everything.filter((e) => e.revision !== 13))]).join('\n');
  assert.match(found, /watcher 1: delete of b at revision 13 \(the client wrote it\) never came/);
  const unanswered = watchAnomalies(history, [watcher(everything), watcher([...everything.slice(0, 5), ev(16, 'a', 'v5')].filter((e) => e.revision !== 15))]).join('\n');
  assert.match(unanswered, /watcher 1: put of b = v6 at revision 15 \(another watcher got it\) never came/);
  assert.match(watchAnomalies(history, [watcher(everything.slice(0, 3))]).join('\n'), /watcher 0: ended at revision 12, short of the last acknowledged write at 14/);
  assert.match(watchAnomalies(history, [watcher([...everything, ev(16, 'a', 'never')])]).join('\n'), /a = never at revision 16, a value no client wrote/);
});

test('a watcher\'s first and last events are compared with the writes too: a last event unlike the acknowledged write at its revision is an anomaly', () => {
  // Found by a user trial: the last event is usually the last acknowledged write, and it was never compared.
  const wrongLast = [...everything.slice(0, 4), ev(14, 'a', 'v1')];
  assert.match(watchAnomalies(history, [watcher(wrongLast)]).join('\n'), /revision 14 of a is .* where the client wrote v5/);
  const wrongFirst = [ev(10, 'a', 'v3'), ...everything.slice(1)];
  assert.match(watchAnomalies(history, [watcher(wrongFirst)]).join('\n'), /revision 10 of a is .* where the client wrote v1/);
});

test('a serializable read may be stale but not of a value no client wrote: such an answer is named', () => {
  const read = (value: string | null, serializable: boolean): Operation => ({ client: 3, input: { f: 'get', key: 'a', ...(serializable ? { serializable: true } : {}) }, call: 50, return: 51, outcome: { type: 'ok', value, revision: 14 } });
  assert.deepEqual(unwrittenReads([...history, read('v1', true), read(null, true), read('v3', true)]), [], 'stale values and absent are written ones');
  assert.match(unwrittenReads([...history, read('ghost', true)]).join('\n'), /serializable read of a at revision 14 answered ghost, a value no client wrote/);
});

test('an acknowledged delete is expected in every watcher\'s span, and a delete of a key no client deleted is named', () => {
  const missed = everything.filter((e) => e.revision !== 13);
  assert.match(watchAnomalies(history, [watcher(missed)]).join('\n'), /delete of b at revision 13 \(the client wrote it\) never came/);
  const spurious = [...everything.slice(0, 4), ev(14, 'c'), ...everything.slice(5)];
  assert.match(watchAnomalies(history, [watcher(spurious)]).join('\n'), /c deleted at revision 14, a key no client deleted/);
});
