import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCOUNT, run, SECRET_KEY, tempDir, write } from './support.js';

const { dir, remove } = tempDir();
afterAll(remove);

/** A config on a memory store (each command its own), for project `project`, in ESM or CommonJS. */
function memoryConfig(project: string, format: 'esm' | 'cjs' = 'esm', fields = `account: '${ACCOUNT}',`): string {
  const body = `{
  vigil: async (options) => {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: '${SECRET_KEY}', ...options });
    await vigil.accounts.ensure('${ACCOUNT}');
    return vigil;
  },
  ${fields}
  project: '${project}',
  constructs: [new Dashboard('board', { header: 'Board' })],
}`;
  return format === 'esm'
    ? `import { createVigil } from '@vigil/core';\nimport { memoryStorage } from '@vigil/core/testing';\nimport { Dashboard } from '@vigil/core/constructs';\nexport default ${body};\n`
    : `const { createVigil } = require('@vigil/core');\nconst { memoryStorage } = require('@vigil/core/testing');\nconst { Dashboard } = require('@vigil/core/constructs');\nmodule.exports = ${body};\n`;
}

describe('finding the config file', () => {
  it('takes the first of vigil.config.ts, .mts, .mjs, .cjs and .js in the working directory', async () => {
    write(dir, {
      'order/vigil.config.js': memoryConfig('from-js'),
      'order/vigil.config.cjs': memoryConfig('from-cjs', 'cjs'),
    });
    const order = join(dir, 'order');
    expect((await run(order, ['plan'])).stdout).toContain('project "from-cjs"');
    write(dir, { 'order/vigil.config.mjs': memoryConfig('from-mjs') });
    expect((await run(order, ['plan'])).stdout).toContain('project "from-mjs"');
    write(dir, { 'order/vigil.config.mts': memoryConfig('from-mts') });
    expect((await run(order, ['plan'])).stdout).toContain('project "from-mts"');
    write(dir, { 'order/vigil.config.ts': memoryConfig('from-ts') });
    const plan = await run(order, ['plan']);
    expect(plan).toMatchObject({ code: 0, stderr: '' });
    expect(plan.stdout).toContain(`Plan for account ${ACCOUNT}, project "from-ts"`);
    expect(plan.stdout).toContain('1 to create');
  }, 60_000);

  it('takes --config over VIGIL_CONFIG over the working directory, for migrate too', async () => {
    write(dir, {
      'named/vigil.config.mjs': memoryConfig('default-file'),
      'named/env.config.mjs': memoryConfig('from-env'),
      'named/flag.config.cjs': memoryConfig('from-flag', 'cjs'),
    });
    const named = join(dir, 'named');
    expect((await run(named, ['plan'], { VIGIL_CONFIG: 'env.config.mjs' })).stdout).toContain('project "from-env"');
    expect((await run(named, ['plan', '--config', 'flag.config.cjs'], { VIGIL_CONFIG: 'env.config.mjs' })).stdout).toContain('project "from-flag"');
    const migrated = await run(dir, ['migrate', '--config', join(named, 'flag.config.cjs')]);
    expect(migrated).toMatchObject({ code: 0, stderr: '' });
    expect(migrated.stdout).toMatch(/^Migrating the memory store … done/);
  }, 60_000);

  it('takes a default export that is a function, sync or async', async () => {
    write(dir, {
      'fn/sync.config.mjs': memoryConfig('sync-fn').replace('export default {', 'export default () => ({').replace(/}\;\n$/, '});\n'),
      'fn/async.config.ts': memoryConfig('async-fn').replace('export default {', 'export default async () => ({').replace(/}\;\n$/, '});\n'),
    });
    expect((await run(join(dir, 'fn'), ['plan', '-c', 'sync.config.mjs'])).stdout).toContain('project "sync-fn"');
    expect((await run(join(dir, 'fn'), ['plan', '-c', 'async.config.ts'])).stdout).toContain('project "async-fn"');
  }, 60_000);
});

describe('a missing or malformed config file', () => {
  it('is named, with the usage exit code, for every command that needs one', async () => {
    write(dir, { 'empty/.keep': '' });
    const empty = join(dir, 'empty');
    for (const args of [['plan'], ['apply'], ['trigger'], ['migrate'], ['keys', 'create']]) {
      const r = await run(empty, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`vigil ${args[0]}: no config file: write vigil.config.ts, vigil.config.mts, vigil.config.mjs, vigil.config.cjs, vigil.config.js in ${empty}, or pass --config <file>`);
    }
    const flag = await run(empty, ['apply', '--config', 'nowhere.ts']);
    expect(flag).toMatchObject({ code: 2, stdout: '' });
    expect(flag.stderr).toBe(`vigil apply: no config file at ${join(empty, 'nowhere.ts')}\n`);
    const env = await run(empty, ['plan'], { VIGIL_CONFIG: 'gone.mjs' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain(`no config file at ${join(empty, 'gone.mjs')} (from VIGIL_CONFIG)`);
  }, 60_000);

  it('names what is wrong in it, with the usage exit code', async () => {
    write(dir, {
      'bad/no-vigil.mjs': `export default { account: '${ACCOUNT}', constructs: [] };\n`,
      'bad/number.mjs': 'export default 42;\n',
      'bad/syntax.ts': 'export default { vigil: ( => 1 };\n',
      'bad/constructs.mjs': memoryConfig('p').replace(/constructs: \[.*\],/, "constructs: 'board',"),
      'bad/account.mjs': memoryConfig('p', 'esm', 'account: 7,'),
      'bad/not-a-vigil.mjs': "export default { vigil: () => ({}), account: 'a' };\n",
      'bad/throws.mjs': "export default async () => { throw new Error('VIGIL_DB is not set'); };\n",
    });
    const bad = join(dir, 'bad');
    const cases: [string, string][] = [
      ['no-vigil.mjs', '`vigil` must be a function (options) => Vigil'],
      ['number.mjs', 'must export by default an object { vigil, account, project, constructs }, or a function answering one'],
      ['syntax.ts', `${join(bad, 'syntax.ts')} failed to load:`],
      ['constructs.mjs', '`constructs` must be an array'],
      ['account.mjs', '`account` must be a non-empty string'],
      ['not-a-vigil.mjs', "the config's `vigil` function must answer a Vigil"],
      ['throws.mjs', `${join(bad, 'throws.mjs')}: its default export (a function) failed: VIGIL_DB is not set`],
    ];
    for (const [file, message] of cases) {
      const r = await run(bad, ['plan', '--config', file]);
      expect(r.code, file).toBe(2);
      expect(r.stderr, file).toContain(message);
    }
  }, 60_000);

  it('without an account, plan and keys create name the field and exit 1; --account gives one', async () => {
    write(dir, { 'no-account/vigil.config.mjs': memoryConfig('p', 'esm', '') });
    const cwd = join(dir, 'no-account');
    for (const args of [['plan'], ['keys', 'create']]) {
      const r = await run(cwd, args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toContain('no account: set `account` in the config file or pass --account <id>');
    }
    const given = await run(cwd, ['plan', '--account', ACCOUNT]);
    expect(given.code).toBe(0);
    expect(given.stdout).toContain(`Plan for account ${ACCOUNT}`);
  }, 60_000);
});

describe('help and usage errors', () => {
  it('lists secret and keys beside the commands of runCli, and needs no config', async () => {
    write(dir, { 'help/.keep': '' });
    const help = await run(join(dir, 'help'), ['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    for (const command of ['plan', 'apply', 'migrate', 'trigger', 'secret', 'keys']) expect(help.stdout).toMatch(new RegExp(`^ {2}${command} +\\S`, 'm'));
    expect(help.stdout).toContain('Options of keys create:');
    expect(help.stdout).toContain('else the first of vigil.config.ts, .mts,\n.mjs, .cjs or .js in the working directory');
    expect((await run(join(dir, 'help'), ['keys', 'create', '--help'])).stdout).toBe(help.stdout);
    expect((await run(join(dir, 'help'), ['plan', '--help'])).stdout).toBe(help.stdout);

    const none = await run(join(dir, 'help'), []);
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toBe(help.stdout);
  }, 60_000);

  it('answers a wrong command line with exit code 2', async () => {
    const cwd = join(dir, 'help');
    const cases: [string[], string][] = [
      [['deploy'], 'vigil: unknown command "deploy"'],
      [['keys'], 'vigil keys: which? `keys create`'],
      [['keys', 'delete'], 'vigil keys: unknown subcommand "delete"'],
      [['keys', 'create', '--nmae', 'x'], "Unknown option '--nmae'"],
      [['secret', '--length', '16'], "Unknown option '--length'"],
      [['trigger', '--tag', 'ok'], "Unknown option '--tag'"],
    ];
    for (const [args, message] of cases) {
      const r = await run(cwd, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(message);
    }
    // An unknown command's message carries the full usage, this package's commands with it.
    expect((await run(cwd, ['deploy'])).stderr).toMatch(/^ {2}secret +Print a new secret key/m);
  }, 60_000);
});
