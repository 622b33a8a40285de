import type { ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `--foo-bar` reads `ETCD_OPERATOR_FOO_BAR` when not given: containers are often configured by environment. */
export const envName = (flag: string): string => `ETCD_OPERATOR_${flag.toUpperCase().replace(/-/g, '_')}`;

/**
 * The options with each default taken from the environment where set (a boolean from "true" or "1"), so a
 * flag on the command line still wins.
 */
export function withEnvDefaults<T extends Options>(options: T, env: NodeJS.ProcessEnv = process.env): T {
  return Object.fromEntries(Object.entries(options).map(([flag, o]) => {
    const value = env[envName(flag)];
    if (value === undefined || value === '') return [flag, o];
    return [flag, { ...o, default: o.type === 'boolean' ? value === 'true' || value === '1' : value }];
  })) as T;
}
