import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { HAS_PROC, idle, isWatcher, spinning, startFixture, stillRunningAfter, type Fixture, type ProcessInfo } from '../../../test/support/process-tree.js';

const HOST = fileURLToPath(new URL('./fixtures/setup-script-host.ts', import.meta.url));
const isScript = (p: ProcessInfo) => p.command.includes('script-worker.cjs');

describe.runIf(HAS_PROC)('a setup script process ends with its host', { timeout: 60_000 }, () => {
  let host: Fixture | undefined;
  afterEach(() => host?.cleanUp());

  it('when the host is killed with SIGKILL while the script loops forever (the host\'s watcher kills it)', async () => {
    host = startFixture(HOST);
    await host.waitFor(/looping/);
    const tree = host.tree();
    const script = tree.find(isScript);
    expect(script, host.output).toBeDefined();
    await spinning(script!.pid);

    host.process.kill('SIGKILL');
    expect(await stillRunningAfter(tree, 5_000)).toEqual([]);
  });

  it('by itself, watcher or not, when the script waits on a timer', async () => {
    host = startFixture(HOST, { SCRIPT: 'wait' });
    await host.waitFor(/looping/);
    const tree = host.tree();
    const script = tree.find(isScript);
    expect(script, host.output).toBeDefined();
    await idle(script!.pid);
    // Without the host's watcher, only the process itself can see that its host is gone.
    for (const watcher of tree.filter(isWatcher)) {
      process.kill(watcher.pid, 'SIGKILL');
      expect(await stillRunningAfter([watcher], 5_000)).toEqual([]);
    }

    host.process.kill('SIGKILL');
    expect(await stillRunningAfter(tree, 5_000)).toEqual([]);
  });
});
