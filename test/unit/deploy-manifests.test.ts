import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { committedManifests } from '../../src/install/committed.js';
import { configurationReference } from '../../src/install/reference.js';

const deployDir = fileURLToPath(new URL('../../../deploy/', import.meta.url));
const reference = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));

test('the committed manifests under deploy/ are what the generator writes (run `npm run generate` if not)', () => {
  for (const [file, text] of Object.entries(committedManifests())) {
    assert.equal(readFileSync(`${deployDir}${file}`, 'utf8'), text, `deploy/${file} is stale`);
  }
});

test('docs/configuration.md is what the CRD schemas generate, and names every field with its rules', () => {
  const text = configurationReference();
  assert.equal(readFileSync(reference, 'utf8'), text, 'docs/configuration.md is stale');
  assert.match(text, /^\| `spec\.size` \| integer \| required; 1–9 \|/m);
  assert.match(text, /^\| `spec\.pod\.labels` \| map\[string\]string \| [^|]*each value: [^|]*at most 63 characters; labels "app" and "etcd_\*" are reserved for the operator; a label key is [^|]*\|/m);
  assert.match(text, /^## EtcdBackup$/m);
  assert.match(text, /^\| `spec\.backupPolicy\.maxBackups` \| integer \|/m);
});
