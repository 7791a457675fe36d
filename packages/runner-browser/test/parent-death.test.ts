import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { HAS_PROC, idle, isWatcher, spinning, startFixture, stillRunningAfter, type Fixture, type ProcessInfo } from '../../../test/support/process-tree.js';
import { HAS_CHROMIUM } from './support.js';

const HOST = fileURLToPath(new URL('./fixtures/browser-host.ts', import.meta.url));
const isScript = (p: ProcessInfo) => p.command.includes('load-worker.cjs');
const isChromium = (p: ProcessInfo) => /chrom/.test(p.command.split(' ')[0]!);

/** The host's processes once its second run's script has started and the next run's process waits, prepared ahead. */
async function started(host: Fixture): Promise<ProcessInfo[]> {
  await host.waitFor(/looping/, 60_000);
  const end = Date.now() + 30_000;
  let tree = host.tree();
  while (tree.filter(isScript).length < 2) {
    if (Date.now() > end) throw new Error(`no process prepared ahead:\n${tree.map((p) => p.command).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
    tree = host.tree();
  }
  expect(tree.some(isChromium)).toBe(true);
  return tree;
}

describe.runIf(HAS_PROC && HAS_CHROMIUM)('a browser check\'s processes end with their host', { timeout: 120_000 }, () => {
  let host: Fixture | undefined;
  afterEach(() => host?.cleanUp());

  it('when the host is killed with SIGKILL: the script looping forever, the one prepared ahead, Chromium', async () => {
    host = startFixture(HOST);
    const tree = await started(host);
    const [running, ahead] = tree.filter(isScript).sort((a, b) => a.started! - b.started!);
    await spinning(running!.pid);
    await idle(ahead!.pid);

    host.process.kill('SIGKILL');
    expect(await stillRunningAfter(tree, 5_000)).toEqual([]);
  });

  it('by themselves, watcher or not, when the script waits on a timer', async () => {
    host = startFixture(HOST, { SCRIPT: 'wait' });
    const tree = await started(host);
    for (const script of tree.filter(isScript)) await idle(script.pid);
    // Without the host's watcher, only the process itself can see that its host is gone.
    for (const watcher of tree.filter(isWatcher)) {
      process.kill(watcher.pid, 'SIGKILL');
      expect(await stillRunningAfter([watcher], 5_000)).toEqual([]);
    }

    host.process.kill('SIGKILL');
    expect(await stillRunningAfter(tree, 5_000)).toEqual([]);
  });
});
