import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeMetrics } from '../../src/runtime/metrics.js';

/** The value of etcd_operator_backup_verification_failing for db/nightly, or undefined when the series is absent. */
async function verificationFailing(metrics: RuntimeMetrics): Promise<string | undefined> {
  const line = (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith('etcd_operator_backup_verification_failing{') && l.includes('backup="nightly"'));
  return line?.split(' ').at(-1);
}

test('a failed verification is reported from the backup\'s status at every pass, so a restarted operator does not hide it until its next verification', async () => {
  const metrics = new RuntimeMetrics();
  const record = (verification?: 'passing' | 'failing' | 'off'): void => {
    metrics.backupObserver.recorded('db', 'nightly', { intervalSeconds: 3600, failing: false, ...(verification ? { verification } : {}) });
  };
  record('failing');
  assert.equal(await verificationFailing(metrics), '1', 'read from a Verified=False condition, no verification run by this process');
  record();
  assert.equal(await verificationFailing(metrics), '1', 'an inconclusive status tells neither way: kept');
  record('passing');
  assert.equal(await verificationFailing(metrics), '0');
  metrics.backupObserver.verified('db', 'nightly', { result: 'failed' });
  assert.equal(await verificationFailing(metrics), '1', 'a verification\'s own verdict');
  record('off');
  assert.equal(await verificationFailing(metrics), undefined, 'verification taken out of the spec: nothing left to alert on');
});
