import { describe, expect, it } from 'vitest';
import { JobControllers } from '../src/engine/job-controllers.js';

describe('the abort controllers of running jobs', () => {
  it('gives the jobs of one lease end one controller, held until the last of them is over', () => {
    const controllers = new JobControllers();
    const a = controllers.take(1_000, false);
    const b = controllers.take(1_000, false);
    const other = controllers.take(2_000, false);
    expect(a.controller).toBe(b.controller);
    expect(other.controller).not.toBe(a.controller);
    a.release();
    expect(controllers.size).toBe(2);
    b.release();
    other.release();
    expect(controllers.size).toBe(0);
    expect(controllers.take(1_000, false).controller).not.toBe(a.controller);
  });

  it('lets every job of a lease end listen to the shared signal without a listener warning', () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const { controller } = new JobControllers().take(1_000, false);
    for (let i = 0; i < 50; i++) controller.signal.addEventListener('abort', () => {});
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      process.off('warning', onWarning);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    });
  });

  it('gives a session run a controller of its own, so a cancel aborts it alone', () => {
    const controllers = new JobControllers();
    const run = controllers.take(1_000, false);
    const session = controllers.take(1_000, true);
    expect(session.controller).not.toBe(run.controller);
    session.controller.abort('cancelled');
    expect(run.controller.signal.aborted).toBe(false);
  });

  it('does not hand an aborted controller to a job that starts after the abort', () => {
    const controllers = new JobControllers();
    const first = controllers.take(1_000, false);
    first.controller.abort('stopping');
    const later = controllers.take(1_000, false);
    expect(later.controller.signal.aborted).toBe(false);
    // The first job's end leaves the later one's controller in place.
    first.release();
    expect(controllers.take(1_000, false).controller).toBe(later.controller);
  });
});
