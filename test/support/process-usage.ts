import { readFileSync } from 'node:fs';

/** Resident memory of a process, in MiB. */
export function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
  return Math.round(Number(/\d+/.exec(line)?.[0] ?? 0) / 1024);
}

/** CPU time a process has used (user + system), in seconds; Linux counts it in ticks of 1/100 s. */
export function cpuSeconds(pid: number): number {
  // Fields after the parenthesised command name; utime and stime are the 14th and 15th of the whole line.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
}

/** Each series of a Prometheus counter in a /metrics text, by its labels (`{method="GET",code="200"}`, or ''). */
export function counterSeries(metricsText: string, name: string): Map<string, number> {
  const lines = metricsText.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return new Map(lines.map((l) => [l.slice(name.length, l.lastIndexOf(' ')).trim(), Number(l.slice(l.lastIndexOf(' ') + 1))]));
}

/** The sum of a Prometheus counter's series in a /metrics text. */
export function counterTotal(metricsText: string, name: string): number {
  return [...counterSeries(metricsText, name).values()].reduce((sum, n) => sum + n, 0);
}
