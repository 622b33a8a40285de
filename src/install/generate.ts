/** `npm run generate`: writes the generated manifests under deploy/ and the configuration reference under docs/. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { committedManifests } from './committed.js';
import { configurationReference } from './reference.js';

for (const [file, text] of Object.entries(committedManifests())) {
  mkdirSync(dirname(`deploy/${file}`), { recursive: true });
  writeFileSync(`deploy/${file}`, text);
}
writeFileSync('docs/configuration.md', configurationReference());
