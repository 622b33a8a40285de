import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';

/** Structured logs: one JSON object a line, ISO timestamps, level names instead of numbers. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
    base: { component: 'etcd-operator' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }, destination);
}

/**
 * Node prints process warnings (a library's notice about Node versions, say) as plain text on stderr, which
 * breaks one-JSON-object-a-line; they go to the log instead.
 */
export function logProcessWarnings(log: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (w) => { log.warn({ warning: w.name, detail: w.message }, 'process warning'); });
}
