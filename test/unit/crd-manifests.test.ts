import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { crdManifests } from '../../src/api/render.js';

const deployDir = fileURLToPath(new URL('../../../deploy/crds/', import.meta.url));

test('the committed CRD manifests are what the API source generates (run `npm run generate` if not)', () => {
  for (const [file, text] of Object.entries(crdManifests())) {
    assert.equal(readFileSync(`${deployDir}${file}`, 'utf8'), text, `deploy/crds/${file} is stale`);
  }
});
