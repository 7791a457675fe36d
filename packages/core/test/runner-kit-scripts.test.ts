import { describe, expect, it } from 'vitest';
import { apiScriptSource, apiScriptSyntaxError, permissionFlag, scriptProcessFlags, WITHHELD_SCRIPT_MODULES } from '../src/index.js';

describe('the fences of a script process (runner-kit)', () => {
  it('turn the permission model on with the flag of the Node version', () => {
    expect(permissionFlag('20.20.2')).toBe('--experimental-permission');
    expect(permissionFlag('22.12.0')).toBe('--experimental-permission');
    expect(permissionFlag('23.5.0')).toBe('--permission');
    expect(permissionFlag('24.1.0')).toBe('--permission');
  });

  it('allow reads of the given paths and the run folder, writes of the run folder only, and a heap limit', () => {
    expect(scriptProcessFlags({ readPaths: ['/app/child/worker.cjs', '/app/node_modules/*'], writeDir: '/tmp/run-1', memoryLimitMb: 128.7, nodeVersion: '20.19.0' })).toEqual([
      '--experimental-permission',
      '--allow-fs-read=/app/child/worker.cjs',
      '--allow-fs-read=/app/node_modules/*',
      '--allow-fs-read=/tmp/run-1/*',
      '--allow-fs-write=/tmp/run-1/*',
      '--max-old-space-size=128',
      '--disable-warning=ExperimentalWarning',
    ]);
    // Nothing else is allowed: no child processes, workers, addons or WASI.
    const flags = scriptProcessFlags({ readPaths: [], writeDir: '/tmp/run-2', memoryLimitMb: 64, nodeVersion: '23.0.0' });
    expect(flags[0]).toBe('--permission');
    expect(flags.filter((f) => /allow-(child-process|worker|addons|wasi)/.test(f))).toEqual([]);
    expect(() => scriptProcessFlags({ readPaths: [], writeDir: '/tmp/x', memoryLimitMb: 0 })).toThrow('memoryLimitMb must be a positive number');
  });

  it('withhold raw sockets, process tools and module', () => {
    expect(WITHHELD_SCRIPT_MODULES).toEqual(expect.arrayContaining(['net', 'tls', 'child_process', 'worker_threads', 'inspector', 'module']));
    expect(WITHHELD_SCRIPT_MODULES).not.toContain('http');
    expect(Object.isFrozen(WITHHELD_SCRIPT_MODULES)).toBe(true);
  });

  it('wrap setup/teardown code in an async function of request, response, require and assert, its body on line 2', () => {
    expect(apiScriptSource('return 1;')).toBe('(async function (request, response, require, assert) {\nreturn 1;\n})');
  });

  it('tell why code does not compile, with its line, without running it', () => {
    expect(apiScriptSyntaxError("await fetch('http://127.0.0.1/');\nrequest.headers.A = '1';\nreturn;")).toBeNull();
    expect(apiScriptSyntaxError('const a = 1;\nconst = 2;')).toMatch(/^Unexpected token '=' \(line 2\)$/);
    expect(apiScriptSyntaxError('let request = 1;')).toBe("Identifier 'request' has already been declared (line 1)");
    // Compiled, never run: a script that would throw or loop is fine to check.
    expect(apiScriptSyntaxError('while (true) {}')).toBeNull();
  });
});
