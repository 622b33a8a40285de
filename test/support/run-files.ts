/**
 * `node dist/test/support/run-files.js CONCURRENCY TIMEOUT_MS FILE...`: runs test files as `node --test` does
 * (each in a process of its own, TAP on stdout, a file bounded as a whole by the timeout, exit status 1 if any test
 * failed), CONCURRENCY at a time, in runOrder's order instead of their paths'. node --test sorts the files it is
 * given; its run() keeps the order of a list.
 *
 * With TEST_DURATIONS_OUT set, writes each file's measured seconds there as JSON, in the shape of
 * test/file-durations.json (which a full run refreshes: TEST_DURATIONS_OUT=test/file-durations.json npm test).
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

const took = new Map<string, number>();
const stream = run({ files: order, concurrency: Number(concurrency), timeout: Number(timeoutMs) });
stream.on('test:fail', () => { process.exitCode = 1; });
// A file's top-level tests run one after another: their durations add up to the file's time.
const count = (data: { nesting: number; file?: string; details: { duration_ms: number } }): void => {
  if (data.nesting === 0 && data.file) took.set(data.file, (took.get(data.file) ?? 0) + data.details.duration_ms / 1000);
};
stream.on('test:pass', count);
stream.on('test:fail', count);
stream.compose(tap).pipe(process.stdout);
stream.on('end', () => {
  const out = process.env.TEST_DURATIONS_OUT;
  if (!out) return;
  const mine = Object.fromEntries([...took].map(([file, s]) => [keyOf(file), Math.round(s)]));
  // Each phase is a run of its own: what an earlier one wrote there is kept.
  const merged = Object.fromEntries(Object.entries({ ...durations, ...durationsIn(out), ...mine }).sort(([a], [b]) => byName(a, b)));
  writeFileSync(out, `${JSON.stringify(merged, null, 2)}\n`);
});
