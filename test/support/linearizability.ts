import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { History, Verdict } from './history.js';
import { labTool } from './lab.js';

/** For porcupine's search over the whole history (past it the verdict is "unknown"), and for shrinking anomalies. */
const SEARCH_TIME = '60s';
const SHRINK_TIME = '20s';
/** Both, reading the history and writing the visualisation, with room to spare: past it the checker is stuck. */
const CHECKER_TIMEOUT_MS = 180_000;

/**
 * Checks a recorded history for linearizability with lab/checker (porcupine): writes it to
 * `${outDir}/${name}.history.json` and porcupine's visualisation beside it (`${name}.html`, opened in a browser),
 * and answers the checker's verdict. Throws when the checker could not check (a malformed history, no checker).
 */
export async function checkHistory(history: History, outDir: string, name: string): Promise<Verdict> {
  const checker = await labTool('checker');
  await mkdir(outDir, { recursive: true });
  const historyFile = `${outDir}/${name}.history.json`;
  await writeFile(historyFile, JSON.stringify(history));
  const args = ['--history', historyFile, '--visualize', `${outDir}/${name}.html`, '--timeout', SEARCH_TIME, '--shrink-time', SHRINK_TIME];
  let stdout: string;
  try {
    // Asynchronous: the search takes up to a minute, during which the test's other work keeps running.
    ({ stdout } = await promisify(execFile)(checker, args, { timeout: CHECKER_TIMEOUT_MS, maxBuffer: 256 * 1024 * 1024 }));
  } catch (err) {
    // The checker exits 0 whatever it finds; an error (its stderr is in the message) means it could not check.
    throw new Error(`lab/checker could not check ${historyFile}: ${(err as Error).message}`);
  }
  return parseVerdict(stdout, historyFile);
}

function parseVerdict(stdout: string, historyFile: string): Verdict {
  const verdict = JSON.parse(stdout) as Partial<Verdict>;
  const { result, operations, checked } = verdict;
  if ((result !== 'ok' && result !== 'illegal' && result !== 'unknown') || typeof operations !== 'number' || typeof checked !== 'number') {
    throw new Error(`lab/checker answered no verdict on ${historyFile}: ${stdout.slice(0, 500)}`);
  }
  return verdict as Verdict;
}
