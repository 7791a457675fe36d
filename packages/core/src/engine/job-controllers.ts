/*
 * The abort controllers of the engine's running jobs. A slot's run, an alert tick or a certificate
 * look is aborted only by stop() or by its lease's watch, and the watch of every job whose lease
 * ends at the same moment (one claim batch) fires at once: those jobs share one controller (an
 * AbortController and its signal cost a run about 2 KB, which young collections then sweep). A
 * session's run has its own, since a cancel aborts it alone.
 */
import { setMaxListeners } from 'node:events';

export interface JobController {
  controller: AbortController;
  /** Called once when the job is over. */
  release: () => void;
}

export class JobControllers {
  /** Shared controllers by the time their jobs' lease watch fires, with how many running jobs hold each. */
  private readonly shared = new Map<number, { controller: AbortController; users: number }>();

  /** The controller of a job whose lease watch fires at `watchAt`; `own` gives it one of its own. */
  take(watchAt: number, own: boolean): JobController {
    if (own) return { controller: new AbortController(), release: () => {} };
    let entry = this.shared.get(watchAt);
    // One aborted already (stop(), its watch) is not handed to a job that starts after.
    if (!entry || entry.controller.signal.aborted) this.shared.set(watchAt, (entry = { controller: sharedController(), users: 0 }));
    const held = entry;
    held.users++;
    return {
      controller: held.controller,
      release: () => {
        if (--held.users === 0 && this.shared.get(watchAt) === held) this.shared.delete(watchAt);
      },
    };
  }

  /** How many shared controllers are held (for tests). */
  get size(): number {
    return this.shared.size;
  }
}

/** A controller whose signal every running job of its lease end listens to (each attempt adds one listener while it runs). */
function sharedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
