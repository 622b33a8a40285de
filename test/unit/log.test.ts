import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

test('process warnings become JSON log lines, and nothing but JSON reaches the output', () => {
  const log = new URL('../../src/runtime/log.js', import.meta.url).href;
  const script = `import { createLogger, logProcessWarnings } from ${JSON.stringify(log)};
    logProcessWarnings(createLogger('info'));
    process.emitWarning('runs on an old Node', 'NodeVersionSupportWarning');`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '', 'no plain-text warning on stderr');
  const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(lines.map((l) => [l.level, l.msg, l.warning, l.detail]), [['warn', 'process warning', 'NodeVersionSupportWarning', 'runs on an old Node']]);
});
