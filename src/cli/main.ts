#!/usr/bin/env node
/** etcd-operator: the operator (`run`) and the commands around it. */
import { OPERATOR_VERSION } from '../version.js';
import { UsageError } from './usage.js';

const DEMO_USAGE = `usage: etcd-operator demo
  On the local lab (started if down): installs the operator, creates a 3-member EtcdCluster, shows it come up, uses it.`;

interface Command { usage: string; main: (argv: string[]) => number | Promise<number> }

// Each command's module is loaded when it runs: the Kubernetes client alone takes seconds to load on a busy
// node, and a backup or restore pod running `snapshot` never needs it.
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => { const m = await import('./run.js'); return { usage: m.RUN_USAGE, main: m.runCommand }; },
  manifests: async () => { const m = await import('./manifests.js'); return { usage: m.MANIFESTS_USAGE, main: m.manifestsCommand }; },
  status: async () => { const m = await import('./status.js'); return { usage: m.STATUS_USAGE, main: m.statusCommand }; },
  demo: async () => ({ usage: DEMO_USAGE, main: (await import('./demo.js')).demoCommand }),
  'data-guard': async () => { const m = await import('./data-guard.js'); return { usage: m.DATA_GUARD_USAGE, main: m.dataGuardCommand }; },
  snapshot: async () => { const m = await import('./snapshot.js'); return { usage: m.SNAPSHOT_USAGE, main: m.snapshotCommand }; },
  version: () => Promise.resolve({ usage: 'usage: etcd-operator version', main: () => { process.stdout.write(`${OPERATOR_VERSION}\n`); return 0; } }),
};

async function help(): Promise<string> {
  const usages = await Promise.all(Object.values(COMMANDS).map(async (load) => (await load()).usage));
  return `etcd-operator ${OPERATOR_VERSION}: commands ${Object.keys(COMMANDS).join(', ')}\n\n${usages.join('\n\n')}\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const load = name === undefined ? undefined : COMMANDS[name];
  if (!load) {
    const helpAsked = name === 'help' || name === '--help' || name === '-h';
    (helpAsked ? process.stdout : process.stderr).write(name && !helpAsked ? `unknown command ${name}\n\n${await help()}` : await help());
    return helpAsked ? 0 : 2;
  }
  const command = await load();
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
