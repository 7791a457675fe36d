import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createVigil, type Vigil } from '@vigil/core';
import { registerKnexStorage } from '@vigil/storage-knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT, run, SECRET_KEY, tempDir, TS_CONFIG, write } from './support.js';

const { dir, remove } = tempDir();
const db = join(dir, 'vigil.sqlite');
const closedMarker = join(dir, 'closed.json');
let server: Server;
let env: Record<string, string>;

beforeAll(async () => {
  // A port that accepts connections: the config's TCP check passes against it.
  server = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { VIGIL_TEST_DB: db, CLI_TEST_PORT: String((server.address() as AddressInfo).port) };
  write(dir, { 'vigil.config.ts': TS_CONFIG });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  remove();
});

/** The store the command wrote, opened in this process once the command has ended. */
async function store<T>(use: (vigil: Vigil) => Promise<T>): Promise<T> {
  const vigil = createVigil({ secretKey: SECRET_KEY, alerts: { enabled: false } }, (c) => {
    registerKnexStorage(c, { client: 'sqlite3', connection: db });
  });
  try {
    return await use(vigil);
  } finally {
    await vigil.close();
  }
}

// The steps share one SQLite file, so they run in order.
describe('the vigil command on a vigil.config.ts', () => {
  it('plans without writing, then applies, building the Vigil with the CLI options and closing it', async () => {
    const plan = await run(dir, ['plan'], { ...env, VIGIL_TEST_CLOSED: closedMarker });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(`Plan for account ${ACCOUNT}, project "cli-test" (dry run: nothing was written)`);
    expect(plan.stdout).toMatch(/^ {2}\+ Check +db +TCP +"Database port"$/m);
    expect(plan.stdout).toContain('1 to create, 0 to update, 0 to delete, 0 unchanged.');
    // The host's vigil function got the CLI's options, and the command closed what it built.
    expect(JSON.parse(readFileSync(closedMarker, 'utf8'))).toEqual({ engine: { kinds: ['session'] }, alerts: { enabled: false } });
    expect(await store((v) => v.checks.list(ACCOUNT, {}))).toMatchObject({ items: [] });

    const apply = await run(dir, ['apply'], env);
    expect(apply.code).toBe(0);
    expect(apply.stdout).toMatch(/^\[1\/1\] creating Check "db" … done \(\d+ ms\)$/m);
    expect(apply.stdout).toContain('1 created, 0 updated, 0 deleted, 0 unchanged.');
    const checks = await store((v) => v.checks.list(ACCOUNT, {}));
    expect(checks.items.map((c) => [c.name, c.checkType])).toEqual([['Database port', 'TCP']]);

    expect((await run(dir, ['plan'], env)).stdout).toContain('No changes: 1 resource matches its construct.');
  }, 60_000);

  it('triggers the applied check, runs it in the command, and exits 0 when it passes', async () => {
    const trigger = await run(dir, ['trigger', '--tags', 'smoke'], env);
    expect(trigger.stderr).toBe('');
    expect(trigger.code).toBe(0);
    expect(trigger.stdout).toMatch(/✓ PASSED {4}Database port \(TCP, us-east-1\) in \d+/);
  }, 60_000);

  it('creates an API key for the config\'s account that then authenticates as it', async () => {
    const created = await run(dir, ['keys', 'create', '--name', 'deploy pipeline'], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^vgl_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toMatch(new RegExp(`^Created API key "deploy pipeline" \\(id [0-9a-f-]{36}\\) for account ${ACCOUNT}\\. It is shown only this once`));
    const key = created.stdout.trim();
    const auth = await store((v) => v.authenticator.authenticate({ authorization: `Bearer ${key}`, account: ACCOUNT }));
    expect(auth.accountId).toBe(ACCOUNT);

    const json = await run(dir, ['keys', 'create', '--json'], env);
    expect(json.code).toBe(0);
    const { key: second, apiKey } = JSON.parse(json.stdout);
    expect(apiKey).toMatchObject({ name: 'vigil cli', prefix: second.slice(0, 12) });
    expect(apiKey).not.toHaveProperty('hash');
    const names = await store((v) => v.apiKeys.list(ACCOUNT));
    expect(names.map((k) => k.name).sort()).toEqual(['deploy pipeline', 'vigil cli']);
    // A forged key of the same shape does not.
    await expect(store((v) => v.authenticator.authenticate({ authorization: `Bearer ${key.slice(0, -2)}xx`, account: ACCOUNT }))).rejects.toMatchObject({ statusCode: 401 });
  }, 60_000);

  it('refuses an account the store lacks, naming it, and makes none', async () => {
    const other = 'b7e0c1d2-0000-4000-8000-000000000001';
    const keys = await run(dir, ['keys', 'create', '--account', other], env);
    expect(keys.code).toBe(1);
    expect(keys.stderr).toContain(`vigil keys: no account "${other}" in the store`);
    const plan = await run(dir, ['plan', '--account', other], env);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain(`vigil plan: no account "${other}" in the store`);
    expect(await store((v) => v.storage.accounts.get(other))).toBeNull();
  }, 60_000);

  it('migrates the store the config names', async () => {
    const migrated = await run(dir, ['migrate'], env);
    expect(migrated).toMatchObject({ code: 0, stderr: '' });
    expect(migrated.stdout).toMatch(/^Migrating the knex-sqlite store … done \(\d+ ms\); its tables are up to date\.\n$/);
  }, 60_000);
});

describe('vigil secret', () => {
  it('prints a new 32-byte key as 64 hex characters, with no config file around', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'vigil-secret-'));
    const [a, b] = await Promise.all([run(empty, ['secret']), run(empty, ['secret'])]);
    rmSync(empty, { recursive: true });
    for (const r of [a, b]) expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(a.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    expect(b.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    expect(a.stdout).not.toBe(b.stdout);
    // createVigil takes it as its secretKey.
    const key = a.stdout.trim();
    await createVigil({ secretKey: key, storage: (await import('@vigil/core/testing')).memoryStorage() }).close();
  }, 30_000);
});
