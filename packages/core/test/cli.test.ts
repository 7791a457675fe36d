import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, runCli, type CliConfig } from '../src/cli/run-cli.js';
import { createVigil, type Vigil } from '../src/container.js';
import { AlertChannel, CheckGroup, Dashboard, TcpCheck } from '../src/constructs/index.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { failResult, FakeRunner } from '../src/testing/fake-runner.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { ACCOUNT_A } from './helpers.js';

const opened: Vigil[] = [];
afterEach(async () => {
  for (const v of opened.splice(0)) await v.close();
});

function constructs() {
  const oncall = new AlertChannel('oncall', { type: 'EMAIL', config: { address: 'oncall@example.com' } });
  const group = new CheckGroup('shop', { name: 'Shop', tags: ['shop'] });
  return [
    oncall,
    group,
    new TcpCheck('db', { name: 'Shop DB', request: { hostname: 'db', port: 5432 }, group, alertChannels: [oncall], tags: ['db'] }),
    new TcpCheck('broken', { name: 'Broken cache', request: { hostname: 'cache', port: 6379 }, tags: ['cache'] }),
    new Dashboard('board', { header: 'Shop' }),
  ];
}

/** A CLI over an in-memory Vigil whose runner fails every check named "Broken ...". */
async function cli(config: CliConfig | null = { accountId: ACCOUNT_A, constructs: constructs() }, clock?: FakeClock) {
  const runner = new FakeRunner('TCP', [(job) => (job.check.name.startsWith('Broken') ? failResult('connect ECONNREFUSED') : {})]);
  const vigil = createVigil({
    storage: memoryStorage(),
    secretKey: randomBytes(32),
    runners: [runner],
    ...(clock ? { clock } : {}),
    engine: { kinds: ['session'] },
  });
  opened.push(vigil);
  await vigil.accounts.ensure(ACCOUNT_A);
  const output = { out: '', err: '' };
  const loaded: (string | undefined)[] = [];
  const run = (...argv: string[]) => {
    output.out = '';
    output.err = '';
    return runCli(argv, {
      vigil: () => vigil,
      loadConfig: (path) => {
        loaded.push(path);
        return config ?? {};
      },
      stdout: (t) => (output.out += t),
      stderr: (t) => (output.err += t),
    });
  };
  return { run, output, vigil, runner, loaded };
}

describe('runCli', () => {
  it('answers usage errors with exit code 2 and help with 0', async () => {
    const { run, output } = await cli();
    expect(await run()).toBe(EXIT_USAGE);
    expect(output.err).toContain('Usage: vigil <command> [options]');
    expect(await run('frobnicate')).toBe(EXIT_USAGE);
    expect(output.err).toContain('unknown command "frobnicate"');
    expect(await run('apply', '--force')).toBe(EXIT_USAGE);
    expect(output.err).toMatch(/vigil apply: Unknown option '--force'/);
    expect(await run('plan', 'extra')).toBe(EXIT_USAGE);
    expect(await run('trigger', '--timeout', 'soon')).toBe(EXIT_USAGE);
    expect(output.err).toContain('--timeout must be a whole number of seconds');
    expect(await run('trigger', '--tags', ',')).toBe(EXIT_USAGE);
    expect(await run('--help')).toBe(EXIT_OK);
    expect(output.out).toContain('trigger  Run checks now');
    expect(await run('apply', '-h')).toBe(EXIT_OK);
  });

  it('plans, applies with progress, and then finds nothing to change', async () => {
    const { run, output, vigil, loaded } = await cli();
    expect(await run('plan', '--config', 'monitoring.mjs')).toBe(EXIT_OK);
    expect(loaded).toEqual(['monitoring.mjs']);
    expect(output.out).toContain(`Plan for account ${ACCOUNT_A}, project "default" (dry run: nothing was written)`);
    expect(output.out).toMatch(/^ {2}\+ AlertChannel {2}oncall {2}EMAIL {2}"oncall@example.com"$/m);
    expect(output.out).toMatch(/^ {2}\+ Check {9}db {6}TCP {4}"Shop DB"$/m);
    expect(output.out).toContain('5 to create, 0 to update, 0 to delete, 0 unchanged.');
    expect((await vigil.storage.checks.listAll(ACCOUNT_A)).length).toBe(0);

    expect(await run('apply')).toBe(EXIT_OK);
    expect(output.out).toContain('[1/5] creating AlertChannel "oncall" … done');
    expect(output.out).toContain('[5/5] creating Dashboard "board" … done');
    expect(output.out).toContain('5 created, 0 updated, 0 deleted, 0 unchanged.');
    expect(await run('apply')).toBe(EXIT_OK);
    expect(output.out).toContain('No changes: 5 resources match their constructs.');
    expect(await run('apply', '--verbose')).toBe(EXIT_OK);
    expect(output.out).toMatch(/^ {2}= Check .*"Shop DB" +id [0-9a-f-]{36}$/m);
  });

  it('shows updates field by field and deletes with --prune; --json prints the plan', async () => {
    const config: CliConfig = { accountId: ACCOUNT_A, project: 'shop', constructs: constructs() };
    const { run, output } = await cli(config);
    await run('apply');
    config.constructs = [new TcpCheck('db', { name: 'Shop DB', request: { hostname: 'db', port: 6432 }, tags: ['db'] })];
    expect(await run('plan', '--prune')).toBe(EXIT_OK);
    expect(output.out).toContain('project "shop"');
    expect(output.out).toMatch(/^ {2}~ Check .*db .*TCP .*"Shop DB"/m);
    expect(output.out).toContain('      request: {"port":5432,"hostname":"db","data":null,"assertions":[],"ipFamily":"IPv4"} → {"port":6432,');
    expect(output.out).toContain('      groupId: 1 → null\n');
    expect(output.out).toMatch(/^ {2}- Dashboard/m);
    expect(output.out).toContain('0 to create, 1 to update, 4 to delete, 0 unchanged.');
    expect(await run('plan')).toBe(EXIT_OK);
    expect(output.out).toContain('4 resources this project made have no construct any more; kept, since prune is off (--prune deletes them):');
    expect(await run('apply', '--prune', '--json')).toBe(EXIT_OK);
    const plan = JSON.parse(output.out);
    expect(plan.summary).toEqual({ create: 0, update: 1, delete: 4, unchanged: 0 });
  });

  it('destroys what the project made only with --yes, leaving other projects alone', async () => {
    const config: CliConfig = { accountId: ACCOUNT_A, project: 'shop', constructs: constructs() };
    const { run, output, vigil } = await cli(config);
    await run('apply');
    const other: CliConfig = { accountId: ACCOUNT_A, project: 'blog', constructs: [new TcpCheck('web', { name: 'Blog', request: { hostname: 'blog', port: 80 } })] };
    await vigil.apply(ACCOUNT_A, other.constructs as unknown[], { project: 'blog' });
    const count = async () => (await vigil.storage.checks.listAll(ACCOUNT_A)).length;
    expect(await count()).toBe(3);
    // Without --yes: the plan, nothing deleted, and exit 2 so a pipeline does not pass for a destroy.
    expect(await run('destroy')).toBe(EXIT_USAGE);
    expect(output.out).toContain('0 to create, 0 to update, 5 to delete, 0 unchanged.');
    expect(output.err).toContain('Nothing was deleted: run "vigil destroy --yes" to delete these 5 resources.');
    expect(await count()).toBe(3);
    expect(await run('destroy', '--yes', '--json')).toBe(EXIT_OK);
    expect(JSON.parse(output.out).summary).toEqual({ create: 0, update: 0, delete: 5, unchanged: 0 });
    expect((await vigil.storage.checks.listAll(ACCOUNT_A)).map((c) => c.name)).toEqual(['Blog']);
    // Nothing left: a second destroy has nothing to do, with or without --yes.
    expect(await run('destroy')).toBe(EXIT_OK);
  });

  it('fails with exit code 1 on invalid constructs, naming each, and on a missing account or config', async () => {
    const { run, output } = await cli({ accountId: ACCOUNT_A, constructs: [new TcpCheck('x', { name: '', request: { hostname: 'h', port: 0 } })] });
    expect(await run('apply')).toBe(EXIT_FAILURE);
    expect(output.err).toContain('vigil apply: A construct is invalid; nothing was applied:');
    expect(output.err).toContain('  TcpCheck "x": name must not be empty');
    expect(output.err).toContain('  TcpCheck "x": request.port must be between 1 and 65535');
    const none = await cli(null);
    expect(await none.run('plan')).toBe(EXIT_FAILURE);
    expect(none.output.err).toContain('no account');
    expect(await none.run('plan', '--account', ACCOUNT_A)).toBe(EXIT_FAILURE);
    expect(none.output.err).toContain('no constructs');
  });

  it('migrates the store', async () => {
    const { run, output } = await cli();
    expect(await run('migrate')).toBe(EXIT_OK);
    expect(output.out).toMatch(/^Migrating the memory store … done \(\d+ ms\); its tables are up to date\.\n$/);
  });

  it('triggers sessions by tags or logical id, waits for them, and exits 1 when one fails', async () => {
    const { run, output, runner } = await cli();
    expect(await run('apply')).toBe(EXIT_OK);
    expect(await run('trigger', '--tags', 'shop')).toBe(EXIT_OK);
    expect(output.out).toContain('Started 1 check session (tags shop):\n  Shop DB (TCP) in us-east-1\n');
    expect(output.out).toMatch(/✓ PASSED {4}Shop DB \(TCP, us-east-1\) in \d+ ms\n/);
    expect(output.out).toMatch(/1 session: 1 passed \(/);

    expect(await run('trigger', '--tags', 'db', '--tags', 'cache')).toBe(EXIT_FAILURE);
    expect(output.out).toMatch(/✗ FAILED {4}Broken cache \(TCP, us-east-1\) in \d+ ms: connect ECONNREFUSED/);
    expect(output.out).toMatch(/2 sessions: (1 passed, 1 failed|1 failed, 1 passed)/);

    expect(await run('trigger', '--check', 'broken', '--json')).toBe(EXIT_FAILURE);
    const result = JSON.parse(output.out);
    expect(result.passed).toBe(false);
    expect(result.sessions.map((s: { name: string; status: string }) => `${s.name} ${s.status}`)).toEqual(['Broken cache FAILED']);
    expect(runner.jobs.every((j) => j.runSource === 'TRIGGER_API')).toBe(true);

    expect(await run('trigger', '--tags', 'nothing-has-this')).toBe(EXIT_FAILURE);
    expect(output.err).toContain('no activated check matches tags nothing-has-this');
    expect(await run('trigger', '--check', 'no-such-logical-id')).toBe(EXIT_FAILURE);
    expect(output.err).toContain('no check has the logical id "no-such-logical-id" in project "default"');
  });

  it('cancels what has not finished by the timeout and fails', async () => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const { run, output, runner, vigil } = await cli(undefined, clock);
    expect(await run('apply')).toBe(EXIT_OK);
    // The run hangs until it is aborted; the CLI's waits are on the fake clock, moved along here.
    runner.willReturn((job) => new Promise(() => void job));
    const done = run('trigger', '--check', 'db', '--timeout', '2');
    for (let i = 0; i < 100 && !output.out.includes('Timed out'); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(250);
    }
    expect(await done).toBe(EXIT_FAILURE);
    expect(output.out).toContain('Timed out after 2 s; cancelled Shop DB.');
    expect(output.out).toContain('1 session: 1 cancelled');
    void vigil;
  });
});
