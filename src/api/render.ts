import { stringify } from 'yaml';
import { allCrds } from './crds.js';

/** The committed CRD manifests under deploy/crds, by file name; generated, never edited by hand. */
export function crdManifests(): Record<string, string> {
  const header = '# Generated from src/api by `npm run generate`; do not edit.\n';
  return Object.fromEntries(allCrds().map((crd) => [`${crd.metadata.name}.yaml`, header + stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false })]));
}
