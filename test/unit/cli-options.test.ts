import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfig } from './kubeconfig-text.js';
import { envName, withEnvDefaults } from '../../src/cli/env-options.js';
import { manifestOptions } from '../../src/cli/manifests.js';
import { UsageError } from '../../src/cli/usage.js';

test('every flag has an ETCD_OPERATOR_ variable; the variable sets the default, the flag still wins', () => {
  assert.equal(envName('metrics-address'), 'ETCD_OPERATOR_METRICS_ADDRESS');
  const options = { 'log-level': { type: 'string', default: 'info' }, 'leader-elect': { type: 'boolean', default: false }, namespace: { type: 'string' } } as const;
  const env = { ETCD_OPERATOR_LOG_LEVEL: 'debug', ETCD_OPERATOR_LEADER_ELECT: 'true', ETCD_OPERATOR_NAMESPACE: '' };
  const withEnv = withEnvDefaults(options, env);
  assert.equal(withEnv['log-level'].default, 'debug');
  assert.equal(withEnv['leader-elect'].default, true);
  assert.equal('default' in withEnv.namespace, false, 'an empty variable is no default');
  assert.equal(withEnvDefaults(options, { ETCD_OPERATOR_LEADER_ELECT: '0' })['leader-elect'].default, false);
});

test('manifests options: defaults, and a clear refusal of a bad pull policy or port', () => {
  const o = manifestOptions(['--namespace', 'etcd', '--cluster-wide', '--image', 'x/y:1', '--metrics-port', '9100']);
  assert.deepEqual([o.namespace, o.clusterWide, o.image, o.metricsPort, o.imagePullPolicy], ['etcd', true, 'x/y:1', 9100, 'IfNotPresent']);
  assert.throws(() => manifestOptions(['--image-pull-policy', 'Sometimes']), UsageError);
  assert.throws(() => manifestOptions(['--metrics-port', '70000']), UsageError);
});

test('a command loads only its own modules: snapshot (run in backup and restore pods), version, and status on a kubeconfig without an exec plugin (read as run reads it) never load the Kubernetes client', (t) => {
  const refuse = `export async function resolve(specifier, context, next) {
    if (specifier.startsWith('@kubernetes/client-node')) throw new Error('the Kubernetes client was loaded');
    return next(specifier, context);
  }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(refuse)}`)});`;
  const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const run = (...args: string[]): { status: number | null; stderr: string } =>
    spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, main, ...args], { encoding: 'utf8' });
  const snapshot = run('snapshot');
  assert.equal(snapshot.status, 2, snapshot.stderr);
  assert.match(snapshot.stderr, /^usage: etcd-operator snapshot/);
  assert.equal(run('version').status, 0);
  const dir = mkdtempSync(join(tmpdir(), 'cli-kubeconfig-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  const written = (name: string, user: Record<string, unknown>): string => {
    writeFileSync(join(dir, name), kubeconfig({ cluster: { server: 'https://127.0.0.1:1' }, user }));
    return join(dir, name);
  };
  // Nothing answers at port 1: the command fails there, after the kubeconfig is read.
  const plain = run('status', '--kubeconfig', written('plain.yaml', { token: 'x' }));
  assert.doesNotMatch(plain.stderr, /the Kubernetes client was loaded/);
  assert.match(plain.stderr, /ECONNREFUSED/);
  const exec = run('status', '--kubeconfig', written('exec.yaml', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'true', interactiveMode: 'Never' } }));
  assert.match(exec.stderr, /the Kubernetes client was loaded/, 'the guard itself works: an exec plugin is the client\'s to run');
});

test('run: the bounds a person sets are refused clearly when they would fail a working operator or are no number', async () => {
  const { runCommand } = await import('../../src/cli/run.js');
  const run = (...flags: string[]): Promise<number> => runCommand(['--namespace', 'etcd', ...flags]);
  // A watch renews within 30 s and a failing list is retried within 45 s: a shorter bound fails a healthy leader.
  await assert.rejects(run('--stale-cache-after', '59'), (e: Error) => e instanceof UsageError && /--stale-cache-after must be at least 60 seconds/.test(e.message));
  await assert.rejects(run('--stuck-stopping-after', '0'), (e: Error) => e instanceof UsageError && /--stuck-stopping-after: 0 is not a whole number above 0/.test(e.message));
  // Member pods have 30 s to stop: within it a pod is stopping, not stuck.
  await assert.rejects(run('--stuck-stopping-after', '29'), (e: Error) => e instanceof UsageError && /--stuck-stopping-after must be at least 30 seconds/.test(e.message));
  await assert.rejects(run('--keep-removed-claims', 'ten'), (e: Error) => e instanceof UsageError && /--keep-removed-claims: ten/.test(e.message));
});
