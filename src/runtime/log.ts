/**
 * Structured logs: one JSON object a line, ISO timestamps, level names instead of numbers, in the shape pino
 * writes (level, time, component, the child's bindings, the call's fields, msg), which the operator used
 * before. Written here rather than loaded: pino and its helpers (a worker-thread transport this operator never
 * uses, redaction, its own serializers) were, with prom-client, the last CommonJS packages the operator loaded
 * at start; without both, importing its run command takes 2.7 MiB less RSS (docs/decisions.md, issue 36).
 */

/** Levels by name, numbered as pino and most log tools number them. */
const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;
type LevelName = Exclude<keyof typeof LEVELS, 'silent'>;

export interface LogFn {
  (fields: object, msg?: string): void;
  (msg: string): void;
}

export type Logger = Record<LevelName, LogFn> & {
  /** A logger whose every line carries `bindings` too. */
  child(bindings: Record<string, unknown>): Logger;
};

/** Where the lines go: stdout unless told. */
export interface LogDestination { write(line: string): unknown }

/** An error as a log reader wants it: its class, message and stack, and what else it carries (code, status). */
function errorFields(err: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { type: err.constructor.name || err.name, message: err.message, stack: err.stack };
  for (const [key, value] of Object.entries(err)) if (!(key in fields)) fields[key] = value;
  if (err.cause !== undefined) fields.cause = err.cause;
  return fields;
}

/** JSON.stringify's replacer: errors anywhere in the fields readable, big integers as text, a cycle cut. */
function replacer(): (this: unknown, key: string, value: unknown) => unknown {
  // The objects from the top down to the one being written: as given, and as written (an error's fields).
  const path: { given: unknown; written: unknown }[] = [];
  return function (this: unknown, _key: string, value: unknown): unknown {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object' || value === null) return value;
    // JSON.stringify calls the replacer with `this` the object holding the value: what is below it is done.
    while (path.length > 0 && path[path.length - 1]?.written !== this) path.pop();
    if (path.some((p) => p.given === value)) return '[Circular]';
    const written = value instanceof Error ? errorFields(value) : value;
    path.push({ given: value, written });
    return written;
  };
}

function logger(threshold: number, destination: LogDestination, bindings: Record<string, unknown>): Logger {
  const at = (level: LevelName): LogFn => {
    if (LEVELS[level] < threshold) return () => undefined;
    return (fieldsOrMsg: object | string, msg?: string): void => {
      // log.error(err) writes the error as `err`, its message the line's, as pino did.
      const [fields, text] = typeof fieldsOrMsg === 'string' ? [{}, fieldsOrMsg]
        : fieldsOrMsg instanceof Error ? [{ err: fieldsOrMsg }, msg ?? fieldsOrMsg.message] : [fieldsOrMsg, msg];
      const line = { level, time: new Date().toISOString(), ...bindings, ...fields, ...(text === undefined ? {} : { msg: text }) };
      destination.write(`${JSON.stringify(line, replacer())}\n`);
    };
  };
  return {
    trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal'),
    child: (more) => logger(threshold, destination, { ...bindings, ...more }),
  };
}

/**
 * Standard output, whose reader going away (a closed pipe) loses the lines but does not stop the operator: an
 * unhandled 'error' on the stream would end the process, where a lost log line costs nothing it is acting on.
 */
function stdout(): LogDestination {
  if (process.stdout.listenerCount('error') === 0) process.stdout.on('error', () => undefined);
  return process.stdout;
}

/** The operator's logger at `level` (trace, debug, info, warn, error, fatal or silent). */
export function createLogger(level: string, destination: LogDestination = stdout()): Logger {
  if (!Object.hasOwn(LEVELS, level)) throw new Error(`unknown log level "${level}" (${Object.keys(LEVELS).join(', ')})`);
  return logger(LEVELS[level as keyof typeof LEVELS], destination, { component: 'etcd-operator' });
}

/**
 * Node prints process warnings (a library's notice about Node versions, say) as plain text on stderr, which
 * breaks one-JSON-object-a-line; they go to the log instead.
 */
export function logProcessWarnings(log: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (w) => { log.warn({ warning: w.name, detail: w.message }, 'process warning'); });
}
