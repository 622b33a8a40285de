#!/usr/bin/env node
/** etcd-operator: the operator (`run`) and the commands around it. */
import { OPERATOR_VERSION } from '../version.js';
import { RUN_USAGE, runCommand } from './run.js';
import { MANIFESTS_USAGE, manifestsCommand } from './manifests.js';
import { STATUS_USAGE, statusCommand } from './status.js';
import { demoCommand } from './demo.js';
import { SNAPSHOT_USAGE, snapshotCommand } from './snapshot.js';
import { UsageError } from './usage.js';

const DEMO_USAGE = `usage: etcd-operator demo
  On the local lab (started if down): installs the operator, creates a 3-member EtcdCluster, shows it come up, uses it.`;

const COMMANDS: Record<string, { usage: string; main: (argv: string[]) => number | Promise<number> }> = {
  run: { usage: RUN_USAGE, main: runCommand },
  manifests: { usage: MANIFESTS_USAGE, main: manifestsCommand },
  status: { usage: STATUS_USAGE, main: statusCommand },
  demo: { usage: DEMO_USAGE, main: demoCommand },
  snapshot: { usage: SNAPSHOT_USAGE, main: snapshotCommand },
  version: { usage: 'usage: etcd-operator version', main: () => { process.stdout.write(`${OPERATOR_VERSION}\n`); return 0; } },
};

const help = (): string => `etcd-operator ${OPERATOR_VERSION}: commands ${Object.keys(COMMANDS).join(', ')}\n\n${Object.values(COMMANDS).map((c) => c.usage).join('\n\n')}\n`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : COMMANDS[name];
  if (!command) {
    const helpAsked = name === 'help' || name === '--help' || name === '-h';
    (helpAsked ? process.stdout : process.stderr).write(name && !helpAsked ? `unknown command ${name}\n\n${help()}` : help());
    return helpAsked ? 0 : 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.main(rest);
  } catch (err) {
    // parseArgs throws TypeErrors with a code for unknown or malformed flags.
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\n\n${command.usage}\n`);
      return 2;
    }
    throw err;
  }
}

process.exitCode = await main(process.argv.slice(2));
