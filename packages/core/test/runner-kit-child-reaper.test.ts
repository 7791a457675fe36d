import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { HAS_PROC, isWatcher, startFixture, stillRunningAfter, type Fixture } from '../../../test/support/process-tree.js';

const HOST = fileURLToPath(new URL('./fixtures/reaper-host.ts', import.meta.url));

describe.runIf(HAS_PROC)('endWithHost: a child ends with its host', { timeout: 60_000 }, () => {
  let host: Fixture | undefined;
  afterEach(() => host?.cleanUp());

  it('a child stuck in a loop is killed, and the watcher exits, when the host is killed with SIGKILL', async () => {
    host = startFixture(HOST);
    const child = Number((await host.waitFor(/ready (\d+)/))[1]);
    const tree = host.tree();
    expect(tree.map((p) => p.pid)).toContain(child);
    expect(tree.filter(isWatcher)).toHaveLength(1);

    host.process.kill('SIGKILL');
    expect(await stillRunningAfter(tree, 5_000)).toEqual([]);
  });

  it('and when the host exits without killing it', async () => {
    host = startFixture(HOST, { HOST_EXITS: '1' });
    const child = Number((await host.waitFor(/ready (\d+)/))[1]);
    await host.exited();
    expect(await stillRunningAfter([{ pid: child, command: 'the looping child' }], 5_000)).toEqual([]);
  });

  it('the watcher does not keep a host running that has nothing left to do', async () => {
    host = startFixture(HOST, { SHORT_CHILD: '1' });
    await host.waitFor(/ready/);
    const tree = host.tree();
    await host.exited();
    expect(await stillRunningAfter(tree, 5_000)).toEqual([]);
  });
});
