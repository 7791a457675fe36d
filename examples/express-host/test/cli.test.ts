import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The `vigil` command of @vigil/cli, as `npm run vigil` runs it (the package's bin).
const bin = fileURLToPath(new URL('../../../packages/cli/dist/bin.mjs', import.meta.url));
const config = fileURLToPath(new URL('./fixtures/cli.config.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vigil-cli-'));
const STEP_MS = 60_000;

let okServer: Server;
let okPort = 0;
let badPort = 0;

beforeAll(async () => {
  // A port that accepts connections, and one that refuses them (listened on once, then closed).
  okServer = createServer((socket) => socket.end());
  okPort = await listen(okServer);
  const closed = createServer();
  badPort = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
});
afterAll(async () => {
  await new Promise((resolve) => okServer.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real bin on the test's SQLite file and state directory. VIGIL_CONFIG names the config for
 * every command (migrate too); --config, where given, names the same file.
 */
function vigil(args: string[], stage = '1'): Promise<Result> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      VIGIL_CONFIG: config,
      VIGIL_DB: join(dir, 'vigil.sqlite'),
      VIGIL_STATE_DIR: join(dir, 'state'),
      CLI_STAGE: stage,
      CLI_OK_PORT: String(okPort),
      CLI_BAD_PORT: String(badPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

// The steps build on each other (one database), so they run in order.
describe('the vigil command of the example host', () => {
  it('migrates, plans without writing, applies with progress, and applies again with no changes', async () => {
    const migrated = await vigil(['migrate']);
    expect(migrated).toMatchObject({ code: 0, stderr: '' });
    expect(migrated.stdout).toMatch(/^Migrating the knex-sqlite store … done \(\d+ ms\); its tables are up to date\.\n$/);

    const plan = await vigil(['plan', '--config', config]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('project "cli-test" (dry run: nothing was written)');
    expect(plan.stdout).toMatch(/^ {2}\+ CheckGroup +backend +"Backend"$/m);
    expect(plan.stdout).toMatch(/^ {2}\+ Check +up +TCP +"Reachable service"$/m);
    expect(plan.stdout).toContain('4 to create, 0 to update, 0 to delete, 0 unchanged.');
    // Nothing was written: the next plan still creates all four.
    expect((await vigil(['plan', '--config', config])).stdout).toContain('4 to create');

    const applied = await vigil(['apply', '--config', config]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/^\[1\/4\] creating CheckGroup "backend" … done \(\d+ ms\)$/m);
    expect(applied.stdout).toMatch(/^\[4\/4\] creating Dashboard "board" … done/m);
    expect(applied.stdout).toMatch(/^ {2}\+ Check +down +TCP +"Unreachable service" +id [0-9a-f-]{36}$/m);
    expect(applied.stdout).toContain('4 created, 0 updated, 0 deleted, 0 unchanged.');

    const again = await vigil(['apply', '--config', config]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No changes: 4 resources match their constructs.');
    const json = JSON.parse((await vigil(['plan', '--config', config, '--json'])).stdout);
    expect(json.entries.map((e: { action: string }) => e.action)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
  }, STEP_MS * 2);

  it('triggers checks by tag or logical id, waits for them, and exits 1 when one fails', async () => {
    const ok = await vigil(['trigger', '--config', config, '--tags', 'ok']);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('Started 1 check session (tags ok):\n  Reachable service (TCP) in us-east-1\n');
    expect(ok.stdout).toMatch(/✓ PASSED {4}Reachable service \(TCP, us-east-1\) in \d+/);
    expect(ok.stdout).toMatch(/1 session: 1 passed \(/);

    const bad = await vigil(['trigger', '--config', config, '--tags', 'bad']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/✗ FAILED {4}Unreachable service \(TCP, us-east-1\) in \d+[^:]*: .*(refused|ECONNREFUSED)/i);

    const both = await vigil(['trigger', '--config', config, '--tags', 'deploy', '--timeout', '120']);
    expect(both.code).toBe(1);
    expect(both.stdout).toContain('Started 2 check sessions (tags deploy)');
    expect(both.stdout).toMatch(/2 sessions: (1 passed, 1 failed|1 failed, 1 passed)/);

    const byLogicalId = await vigil(['trigger', '--config', config, '--check', 'up', '--json']);
    expect(byLogicalId.code).toBe(0);
    const result = JSON.parse(byLogicalId.stdout);
    expect(result.passed).toBe(true);
    expect(result.sessions.map((s: { name: string; status: string; runSource: string }) => [s.name, s.status, s.runSource]))
      .toEqual([['Reachable service', 'PASSED', 'TRIGGER_API']]);

    const none = await vigil(['trigger', '--config', config, '--tags', 'no-such-tag']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no activated check matches tags no-such-tag');
  }, STEP_MS * 3);

  it('runs as `npm run vigil`, through the bin npm linked for @vigil/cli', () => {
    const out = spawnSync('npm', ['run', '--silent', 'vigil', '--', '--help'], { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8', timeout: STEP_MS });
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/^ {2}destroy /m);
    expect(out.stdout).toMatch(/^ {2}secret /m);
  }, STEP_MS);

  it('answers usage errors with exit code 2', async () => {
    const unknownOption = await vigil(['trigger', '--tag', 'ok']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toContain("Unknown option '--tag'");
    expect((await vigil(['deploy'])).code).toBe(2);
    expect((await vigil(['apply', '--config'])).code).toBe(2);
    // A config file that is not there is a usage error too, named.
    const missing = await vigil(['plan', '--config', join(dir, 'missing.mjs')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`vigil plan: no config file at ${join(dir, 'missing.mjs')}`);
  }, STEP_MS);

  it('shows an update and keeps a removed construct\'s check until apply --prune deletes it', async () => {
    const plan = await vigil(['plan', '--config', config], '2');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^ {2}~ Check +up +TCP/m);
    expect(plan.stdout).toContain('      frequency: 10 → 5');
    expect(plan.stdout).toContain('1 resource this project made has no construct any more; kept, since prune is off (--prune deletes them):');
    expect(plan.stdout).toMatch(/^ {2}\? Check +down +TCP +"Unreachable service"/m);

    const pruned = await vigil(['apply', '--config', config, '--prune'], '2');
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(/^\[1\/2\] updating Check "up" … done/m);
    expect(pruned.stdout).toMatch(/^\[2\/2\] deleting Check "down" … done/m);
    expect(pruned.stdout).toContain('0 created, 1 updated, 1 deleted, 2 unchanged.');
    expect((await vigil(['apply', '--config', config, '--prune'], '2')).stdout).toContain('No changes: 3 resources match their constructs.');
    // The deleted check no longer runs.
    expect((await vigil(['trigger', '--config', config, '--tags', 'bad'])).code).toBe(1);
  }, STEP_MS * 2);

  it('refuses invalid constructs with exit code 1, naming the construct and field, and writes nothing', async () => {
    const invalid = await vigil(['apply', '--config', config, '--prune'], 'invalid');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('vigil apply: A construct is invalid; nothing was applied:');
    expect(invalid.stderr).toContain('  TcpCheck "broken": request.port must be between 1 and 65535');
    expect((await vigil(['plan', '--config', config], '2')).stdout).toContain('No changes: 3 resources');
  }, STEP_MS);
});
