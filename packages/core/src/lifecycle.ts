/** What `closeOnSignals` closes: a Vigil instance (or anything with the same two methods). */
export interface Closable {
  stop(deadlineMs?: number): Promise<void>;
  close(deadlineMs?: number): Promise<void>;
}

export interface CloseOnSignalsOptions {
  /** Default `['SIGINT', 'SIGTERM']`. */
  signals?: readonly NodeJS.Signals[];
  /** How long running checks may take to finish before they are aborted. Default: the engine's `stopDeadlineMs`. */
  deadlineMs?: number;
  /**
   * Runs once the engine has stopped and before the store closes: close the HTTP server here, so
   * requests under way are answered while no check runs any more.
   */
  beforeClose?: () => unknown;
  /** Where progress is told. Default `console.log`; `() => {}` for silence. */
  log?: (message: string) => void;
  /** End the process once closed (0; 1 if closing failed). Default true; false leaves it to the host. */
  exit?: boolean;
}

/**
 * Closes Vigil on the first of `signals`: no slot is claimed any more, running checks finish (up
 * to the deadline), leases go back to the other processes, `beforeClose` runs, then everything
 * Vigil opened (store, browsers, sockets) is closed and the process ends. A second signal while
 * closing ends the process at once (exit code 1). Answers a function that removes the handlers.
 */
export function closeOnSignals(vigil: Closable, options: CloseOnSignalsOptions = {}): () => void {
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  const log = options.log ?? ((message: string) => console.log(message));
  const exit = options.exit ?? true;
  let closing = false;
  const remove = () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
  async function onSignal(signal: NodeJS.Signals): Promise<void> {
    if (closing) {
      log(`${signal} again: ending now`);
      process.exit(1);
    }
    closing = true;
    log(`${signal}: Vigil is stopping${options.deadlineMs === undefined ? '' : `; running checks get up to ${options.deadlineMs} ms`}`);
    let code = 0;
    try {
      await vigil.stop(options.deadlineMs);
      await options.beforeClose?.();
      await vigil.close(options.deadlineMs);
      log('Vigil stopped');
    } catch (err) {
      log(`Vigil did not stop cleanly: ${err instanceof Error ? err.message : String(err)}`);
      code = 1;
    }
    remove();
    if (exit) process.exit(code);
    else if (code !== 0) process.exitCode = code;
  }
  for (const signal of signals) process.on(signal, onSignal);
  return remove;
}
