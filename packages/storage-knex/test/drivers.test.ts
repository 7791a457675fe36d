import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The built package, as an app imports it (npm test builds it first).
const dist = fileURLToPath(new URL('../dist/index.mjs', import.meta.url));
const hide = fileURLToPath(new URL('./support/hide-module.cjs', import.meta.url));

/** Runs `code` in a fresh Node process where the packages in `hidden` cannot be found. */
function inApp(hidden: string, code: string) {
  const script = `import { knexStorage } from ${JSON.stringify(dist)};\n${code}`;
  const out = spawnSync(process.execPath, ['--require', hide, '--input-type=module', '-e', script], {
    env: { ...process.env, VIGIL_HIDE_MODULES: hidden }, encoding: 'utf8', timeout: 30_000,
  });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('database drivers are the host\'s to install', () => {
  it('a store on SQLite without sqlite3 installed fails at once, naming the package to install', () => {
    const r = inApp('sqlite3', `try { knexStorage({ connection: ':memory:' }); } catch (e) { console.log(e.message); }`);
    expect(r.stdout.trim()).toBe('@vigil/storage-knex opens SQLite with the `sqlite3` package, which is not installed: run `npm install sqlite3` in your app');
    expect(r.stderr).not.toMatch(/Knex: run/);
  });

  it('a store on PostgreSQL without pg installed says so; SQLite alone needs no pg', () => {
    const r = inApp('pg', `
      try { knexStorage({ client: 'pg', connection: 'postgres://127.0.0.1:1/none' }); } catch (e) { console.log(e.message); }
      const s = knexStorage({ connection: ':memory:' });
      await s.migrate();
      console.log('sqlite ok');
      await s.close();`);
    expect(r.stdout.trim().split('\n')).toEqual([
      '@vigil/storage-knex opens PostgreSQL with the `pg` package, which is not installed: run `npm install pg` in your app',
      'sqlite ok',
    ]);
  });
});
