import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyName } from '../../src/controllers/backup/verify.js';

test('a verification\'s cluster is named for its backup and is always a valid cluster name', () => {
  assert.equal(verifyName('nightly'), 'nightly-verify');
  assert.equal(verifyName('db.nightly'), 'db-nightly-verify', 'no dot: it would break the member host names');
  assert.equal(verifyName('7-days'), 'v7-days-verify', 'a letter first');
  const long = verifyName(`a${'-b'.repeat(100)}`);
  assert.ok(long.length <= 54 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(long), long);
});
