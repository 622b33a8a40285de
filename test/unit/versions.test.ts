import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULT_ETCD_VERSION } from '../../src/api/etcd-cluster.js';
import { forceNewClusterKeepsData, highestVersion, lowestVersion, minorAtMost, ofMinor, upgradeVerdict } from '../../src/etcd/versions.js';

const reason = (running: string[], target: string): string => {
  const v = upgradeVerdict(running, target);
  return v.allowed ? 'allowed' : v.reason;
};

test('versions order by number, not by string', () => {
  assert.equal(lowestVersion(['3.10.0', '3.9.1', 'v3.9.0', 'junk']), 'v3.9.0');
  assert.equal(highestVersion(['3.10.0', '3.9.1']), '3.10.0');
  assert.equal(lowestVersion([]), undefined);
});

test('etcd’s version rules: patches both ways, one minor up at a time from a late enough patch, one minor down from 3.6 on', () => {
  assert.equal(reason(['3.5.17'], '3.5.35'), 'allowed');
  assert.equal(reason(['3.5.35'], '3.5.17'), 'allowed', 'patch downgrades within a minor version are allowed by etcd');
  assert.equal(reason(['3.5.35', '3.5.35'], '3.6.5'), 'allowed');
  assert.equal(reason(['3.5.35', '3.6.5'], '3.6.5'), 'allowed', 'an upgrade under way continues');
  assert.equal(reason(['3.5.17'], '3.6.5'), 'PatchTooOld');
  assert.equal(reason(['3.5.35', '3.5.17'], '3.6.5'), 'PatchTooOld', 'every member must be at the floor');
  assert.equal(reason(['3.4.30'], '3.6.5'), 'SkippedMinor');
  assert.deepEqual(upgradeVerdict(['3.6.5'], '3.5.35'), { allowed: true, downgradeTo: '3.5' }, 'one minor down from 3.6, through etcd\'s downgrade API');
  assert.deepEqual(upgradeVerdict(['3.5.35', '3.6.5'], '3.5.35'), { allowed: true, downgradeTo: '3.5' }, 'a downgrade under way continues');
  assert.equal(reason(['3.6.5'], '3.5.17'), 'PatchTooOld', 'down to a patch the way back up accepts');
  assert.equal(reason(['3.7.0'], '3.5.35'), 'Downgrade', 'one minor at a time');
  assert.equal(reason(['3.5.35'], '3.4.30'), 'Downgrade', '3.5 has no downgrade API: data once run by 3.5 has no way back but a backup');
  assert.equal(reason(['3.4.30', '3.6.5'], '3.5.35'), 'Downgrade');
  assert.equal(reason(['3.6.5'], '4.0.0'), 'MajorChange');
  assert.equal(reason(['3.6.5'], 'latest'), 'UnknownVersion');
  assert.equal(reason([], '3.6.5'), 'allowed', 'nothing runs yet');
  assert.equal(reason(['3.4.30'], '3.5.0'), 'allowed', 'no floor is documented for 3.5');
});

test('minors compared as numbers; what is not a version is of no minor', () => {
  assert.deepEqual(['3.5.35', '3.5.0', '3.4.9', '3.6.0', '2.9.9', '', undefined].map((v) => minorAtMost(v, '3.5')), [true, true, true, false, true, false, false]);
  assert.deepEqual(['3.5.0', 'v3.5.35', '3.6.0', '3.10.0', ''].map((v) => ofMinor(v, '3.5')), [true, true, false, false, false]);
});

test('--force-new-cluster keeps what the database holds from 3.5.22 and 3.6.1 on (etcd issue 20009), and in every later minor', () => {
  assert.deepEqual(['3.5.17', '3.5.21', '3.5.22', '3.5.35', '3.6.0', '3.6.1', '3.6.5', '3.7.0', '3.4.27', 'x'].map(forceNewClusterKeepsData),
    [false, false, true, true, false, true, true, true, false, false]);
});

test('the default version recovers a survivor without losing writes, is a step from which 3.6 can be reached, and the lab has its image', () => {
  assert.ok(forceNewClusterKeepsData(DEFAULT_ETCD_VERSION), 'survivor recovery runs on it');
  assert.equal(reason([DEFAULT_ETCD_VERSION], '3.6.5'), 'allowed', 'at or past the 3.6 upgrade floor');
  const labVersions = /^ETCD_VERSIONS="([^"]*)"$/m.exec(readFileSync(new URL('../../../lab/build/versions.env', import.meta.url), 'utf8'))?.[1]?.split(' ') ?? [];
  assert.ok(labVersions.includes(`v${DEFAULT_ETCD_VERSION}`), `the lab builds v${DEFAULT_ETCD_VERSION}`);
});
