/** `npm run generate`: writes the CRD manifests under deploy/crds from the API source. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { crdManifests } from './render.js';

mkdirSync('deploy/crds', { recursive: true });
for (const [file, text] of Object.entries(crdManifests())) writeFileSync(`deploy/crds/${file}`, text);
