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
