import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const childStop = fileURLToPath(new URL('../support/child-stop.js', import.meta.url));

/** Whether a process runs (a zombie, killed and not yet reaped by whoever adopted it, does not). */
const runs = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

test('a process a test started does not outlive the test process when the runner ends it with SIGTERM (its file past its bound)', async () => {
  // A test process that starts a server and would run for ever, as a file past its bound does.
  const script = `const { owned } = await import(${JSON.stringify(childStop)}); const { spawn } = await import('node:child_process');
    const server = owned(spawn('sleep', ['600'], { stdio: 'ignore' })); console.log(server.pid); setInterval(() => undefined, 1000);`;
  const testProcess = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(testProcess.stdout, 'data')) as [Buffer];
  const server = Number(line.toString().trim());
  assert.ok(runs(server), 'the server runs');
  testProcess.kill('SIGTERM');
  const [code] = (await once(testProcess, 'exit')) as [number | null];
  assert.equal(code, 143, 'the test process ends as a SIGTERM would end it');
  for (let i = 0; i < 50 && runs(server); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(runs(server), false, 'the server it started is gone with it');
});
