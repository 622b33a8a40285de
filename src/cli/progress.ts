/**
 * Progress of a long command. On a terminal, one line per step that updates in place with a spinner and the
 * elapsed time; elsewhere (CI, a pipe), a plain timestamped line whenever the state changes.
 */
export interface Progress {
  /** Starts a step; the previous one is taken as done. */
  step(title: string): void;
  /** The current state of the step; repeats are not printed again. */
  update(state: string): void;
  /** Ends the step with its outcome. */
  done(outcome: string): void;
  fail(outcome: string): void;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function progress(out: NodeJS.WritableStream & { isTTY?: boolean }, now: () => number = Date.now): Progress {
  let title = '';
  let state = '';
  let started = now();
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  const elapsed = (): string => `${((now() - started) / 1000).toFixed(1)}s`;
  const tty = out.isTTY === true;
  const redraw = (): void => {
    frame = (frame + 1) % SPINNER.length;
    out.write(`\r\x1b[2K${SPINNER[frame] ?? ''} ${title} ${elapsed()}${state ? `  ${state}` : ''}`);
  };
  const finish = (mark: string, outcome: string): void => {
    if (timer) clearInterval(timer);
    timer = undefined;
    if (title === '') return;
    out.write(tty ? `\r\x1b[2K${mark} ${title} (${elapsed()})  ${outcome}\n` : `[${elapsed()}] ${title}: ${outcome}\n`);
    title = '';
  };
  return {
    step(next) {
      finish('✓', 'done');
      title = next;
      state = '';
      started = now();
      if (tty) timer = setInterval(redraw, 100).unref();
      else out.write(`[0.0s] ${title}\n`);
    },
    update(next) {
      if (next === state) return;
      state = next;
      if (!tty) out.write(`[${elapsed()}] ${title}: ${state}\n`);
    },
    done: (outcome) => { finish('✓', outcome); },
    fail: (outcome) => { finish('✗', outcome); },
  };
}
