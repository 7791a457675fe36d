import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'packages/core/dist');

/** Runs a snippet in a plain Node process from the repo root, so the package's exports map is what resolves. */
function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();
}

const probe = (load: string) => `
  const core = ${load}('@vigil/core');
  const testing = ${load}('@vigil/core/testing');
  const internals = ${load}('@vigil/core/internals');
  const v = core.createVigil({ storage: testing.memoryStorage(), secretKey: '${'ab'.repeat(32)}' });
  const out = {
    error: new core.NotFoundError('x').toJSON(),
    offset: internals.frequencyOffsetError(5, 51),
    internalsOffRoot: typeof core.frequencyOffsetError,
    hasServices: typeof v.checks.create === 'function',
    suites: [typeof testing.storageSuite, typeof testing.runnerSuite, typeof testing.transportSuite],
  };
`;

describe('the built @vigil/core', () => {
  it('ships ESM, CJS and a declaration file for each, for the main entry, ./testing and ./internals', () => {
    for (const entry of ['index', 'testing', 'internals']) for (const f of [`${entry}.mjs`, `${entry}.cjs`, `${entry}.d.mts`, `${entry}.d.cts`]) {
      expect(existsSync(join(dist, f)), f).toBe(true);
    }
  });

  it('loads with import', () => {
    const out = node(['--input-type=module', '-e', `${probe('await import')} console.log(JSON.stringify(out));`]);
    expect(JSON.parse(out)).toEqual({
      error: { statusCode: 404, error: 'Not Found', message: 'x' },
      offset: 'must be between 1 and 50 when frequency is 5',
      internalsOffRoot: 'undefined',
      hasServices: true,
      suites: ['function', 'function', 'function'],
    });
  });

  it('ships ./constructs, whose constructs the main entry recognises (ESM and CJS alike)', () => {
    for (const f of ['constructs.mjs', 'constructs.cjs', 'constructs.d.mts', 'constructs.d.cts']) expect(existsSync(join(dist, f)), f).toBe(true);
    const esm = node(['--input-type=module', '-e', `
      const core = await import('@vigil/core');
      const { TcpCheck, CheckGroup } = await import('@vigil/core/constructs');
      const cjs = (await import('node:module')).createRequire(process.cwd() + '/')('@vigil/core/constructs');
      console.log(JSON.stringify([core.isConstruct(new TcpCheck('db', {})), core.isConstruct(new cjs.CheckGroup('g', {})), String(new CheckGroup('g', {})), typeof core.runCli]));
    `]);
    expect(JSON.parse(esm)).toEqual([true, true, 'CheckGroup "g"', 'function']);
  });

  it('loads with require', () => {
    const out = node(['-e', `${probe('require')} console.log(JSON.stringify(out));`]);
    expect(JSON.parse(out).error).toEqual({ statusCode: 404, error: 'Not Found', message: 'x' });
    expect(JSON.parse(out).hasServices).toBe(true);
    expect(JSON.parse(out).offset).toBe('must be between 1 and 50 when frequency is 5');
  });
});
