import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createLogger } from '../../src/runtime/log.js';
import type { Logger } from '../../src/runtime/log.js';

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

/** A logger at `level` and the objects of the lines it wrote. */
function captured(level: string): { log: Logger; lines: Record<string, unknown>[]; raw: string[] } {
  const raw: string[] = [];
  const log = createLogger(level, { write: (l: string) => { raw.push(l); } });
  return { log, raw, get lines() { return raw.map((l) => JSON.parse(l) as Record<string, unknown>); } };
}

test('a line is one JSON object: level by name, ISO time, component, the child\'s bindings, the fields, msg last', () => {
  const c = captured('info');
  c.log.child({ controller: 'etcdcluster' }).child({ key: 'ns/a' }).info({ member: 'a-1', count: 3 }, 'member pod created');
  c.log.warn('no fields');
  assert.equal(c.raw.length, 2);
  assert.ok(c.raw.every((l) => l.endsWith('}\n') && !l.slice(0, -1).includes('\n')), 'one line each');
  const [first, second] = c.lines;
  assert.match(String(first?.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(Object.keys(first ?? {}), ['level', 'time', 'component', 'controller', 'key', 'member', 'count', 'msg']);
  assert.deepEqual(first, { ...first, level: 'info', component: 'etcd-operator', controller: 'etcdcluster', key: 'ns/a', member: 'a-1', count: 3, msg: 'member pod created' });
  assert.deepEqual([second?.level, second?.msg], ['warn', 'no fields']);
});

test('levels below the threshold write nothing; "silent" writes nothing at all; an unknown level is refused', () => {
  const info = captured('info');
  info.log.debug({ a: 1 }, 'hidden');
  info.log.trace('hidden');
  info.log.error('shown');
  assert.deepEqual(info.lines.map((l) => l.msg), ['shown']);
  const silent = captured('silent');
  silent.log.fatal('never');
  assert.equal(silent.raw.length, 0);
  const debug = captured('debug');
  debug.log.debug('shown');
  assert.equal(debug.raw.length, 1);
  assert.throws(() => createLogger('verbose'), /unknown log level "verbose"/);
});

test('an error is written with its class, message, stack and own fields, wherever it is; cycles and big integers do not throw', () => {
  const c = captured('info');
  const err = Object.assign(new TypeError('bad member'), { code: 'E_MEMBER', statusCode: 409 });
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  c.log.error({ err, nested: { reason: new RangeError('deep') }, cyclic, revision: 2n ** 64n }, 'failed');
  const line = c.lines[0] ?? {};
  const written = line.err as Record<string, unknown>;
  assert.deepEqual([written.type, written.message, written.code, written.statusCode], ['TypeError', 'bad member', 'E_MEMBER', 409]);
  assert.match(String(written.stack), /TypeError: bad member\n\s+at /);
  assert.deepEqual([(line.nested as { reason: Record<string, unknown> }).reason.type, (line.nested as { reason: Record<string, unknown> }).reason.message], ['RangeError', 'deep']);
  assert.deepEqual(line.cyclic, { name: 'loop', self: '[Circular]' });
  assert.equal(line.revision, '18446744073709551616');
});

test('an error given alone is written as err, its message the line\'s; a closed stdout loses lines without ending the process', () => {
  const c = captured('info');
  c.log.error(new RangeError('out of range'));
  c.log.warn(new Error('with a message of its own'), 'told');
  const [alone, told] = c.lines;
  assert.deepEqual([alone?.msg, (alone?.err as Record<string, unknown>).type, (alone?.err as Record<string, unknown>).message], ['out of range', 'RangeError', 'out of range']);
  assert.deepEqual([told?.msg, (told?.err as Record<string, unknown>).message], ['told', 'with a message of its own']);
  const log = new URL('../../src/runtime/log.js', import.meta.url).href;
  // The reader of stdout gone: every write fails with EPIPE.
  const script = `import { createLogger } from ${JSON.stringify(log)};
    const log = createLogger('info');
    for (let i = 0; i < 2000; i++) log.info({ i, pad: 'x'.repeat(200) }, 'line');
    setTimeout(() => { process.stderr.write('still running'); }, 200);`;
  const run = spawnSync('bash', ['-c', `${JSON.stringify(process.execPath)} --input-type=module -e "$0" | head -c 10 > /dev/null; exit "\${PIPESTATUS[0]}"`, script], { encoding: 'utf8' });
  assert.equal(run.stderr, 'still running');
  assert.equal(run.status, 0);
});
