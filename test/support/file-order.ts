import { byName } from '../../src/runtime/order.js';

/**
 * The order a phase's test files start in, when they run a few at a time. Longest first: a long file started last
 * runs on alone while the other slots have nothing left (node --test starts files in the order of their paths).
 * A file that waits for a tool built behind a first lab (Prometheus,
 * the CoreOS operator, the CSI resizer, Helm: all built some 13 minutes after a cold lab is up) starts after the
 * long ones: started first, it held a slot doing nothing until the build was done.
 */
export interface TestFile {
  path: string;
  /** Its measured run time (test/file-durations.json); undefined for a file not measured yet. */
  seconds: number | undefined;
  /** It waits for a tool built behind a first lab (a line `// lab: late — <why>`). */
  late: boolean;
}

/** What a file not measured yet is taken to take: among the long ones, so a new slow file is not started last. */
export const UNMEASURED_SECONDS = 180;
/** Files shorter than this go after the late ones: they fill the slots at the end. */
export const SHORT_SECONDS = 60;

export function runOrder(files: readonly TestFile[]): string[] {
  const seconds = (f: TestFile): number => f.seconds ?? UNMEASURED_SECONDS;
  const longestFirst = (a: TestFile, b: TestFile): number => seconds(b) - seconds(a) || byName(a.path, b.path);
  const long = files.filter((f) => !f.late && seconds(f) >= SHORT_SECONDS).sort(longestFirst);
  const late = files.filter((f) => f.late).sort(longestFirst);
  const short = files.filter((f) => !f.late && seconds(f) < SHORT_SECONDS).sort(longestFirst);
  return [...long, ...late, ...short].map((f) => f.path);
}
