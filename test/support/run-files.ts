/**
 * `node dist/test/support/run-files.js CONCURRENCY TIMEOUT_MS FILE...`: runs test files as `node --test` does
 * (each in a process of its own, TAP on stdout, a file bounded as a whole by the timeout, exit status 1 if any test
 * failed), CONCURRENCY at a time, in runOrder's order instead of their paths'. node --test sorts the files it is
 * given; its run() keeps the order of a list.
 *
 * With TEST_DURATIONS_OUT set, writes each file's measured seconds there as JSON, in the shape of
 * test/file-durations.json, which a full run refreshes: TEST_DURATIONS_OUT=/tmp/durations.json npm test, then
 * copy the file over it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from 'node:test';
import { tap } from 'node:test/reporters';
import { runOrder } from './file-order.js';
import { byName } from '../../src/runtime/order.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
/** A file's key in the durations: its path under dist/test without the extension ("e2e/node-loss"). */
const keyOf = (path: string): string => relative(join(root, 'dist/test'), resolve(path)).replace(/\.test\.js$/, '');

/** Durations as a file holds them; none if it is missing or unreadable (every file is then taken as unmeasured). */
function durationsIn(path: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

const [concurrency = '1', timeoutMs = '900000', ...files] = process.argv.slice(2);
const durations = durationsIn(join(root, 'test/file-durations.json'));
const order = runOrder(files.map((path) => ({
  path, seconds: durations[keyOf(path)], late: /^\/\/ lab: late\b/m.test(readFileSync(path, 'utf8')),
})));

/** Per file: the sum of its top-level tests, and the whole file's time when the runner reports one (it failed as a file). */
const took = new Map<string, { tests: number; file: number }>();
const stream = run({ files: order, concurrency: Number(concurrency), timeout: Number(timeoutMs) });
// A failing todo test fails nothing, as with node --test.
stream.on('test:fail', (data) => { if (data.todo === undefined || data.todo === false) process.exitCode = 1; });
// A file's top-level tests run one after another: their durations add up to the file's time. A file that times
// out, crashes or exits non-zero is also reported as one test named by its path, over its whole time: that time
// is the file's, not one more test's.
const count = (data: { name: string; nesting: number; file?: string; details: { duration_ms: number } }): void => {
  if (data.nesting !== 0 || !data.file) return;
  const seen = took.get(data.file) ?? { tests: 0, file: 0 };
  const seconds = data.details.duration_ms / 1000;
  took.set(data.file, resolve(data.name) === data.file ? { ...seen, file: seconds } : { ...seen, tests: seen.tests + seconds });
};
stream.on('test:pass', count);
stream.on('test:fail', count);
stream.compose(tap).pipe(process.stdout);
stream.on('end', () => {
  const out = process.env.TEST_DURATIONS_OUT;
  if (!out) return;
  // Files of the project's tests only (a file elsewhere has no place in test/file-durations.json).
  const mine: Record<string, number> = {};
  for (const [file, t] of took) if (!keyOf(file).startsWith('..')) mine[keyOf(file)] = Math.round(Math.max(t.tests, t.file));
  // Each phase is a run of its own: what an earlier phase wrote there is kept (a path that does not exist yet
  // collects one whole run, to copy over test/file-durations.json).
  const merged = Object.fromEntries(Object.entries({ ...durationsIn(out), ...mine }).sort(([a], [b]) => byName(a, b)));
  writeFileSync(out, `${JSON.stringify(merged, null, 2)}\n`);
});
