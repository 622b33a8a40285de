import { readFileSync } from 'node:fs';

/** The operator's release, from package.json (dist/src/version.js sits two folders below it). */
export const OPERATOR_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
