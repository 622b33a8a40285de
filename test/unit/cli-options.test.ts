import { test } from 'node:test';
import assert from 'node:assert/strict';
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
