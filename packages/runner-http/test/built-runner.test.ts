import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CheckGroup } from '@vigil/core';
import { checkGroupFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { apiJob, json, localServers } from './support.js';

// The other tests run the sources; these load the built package (ESM and CJS), whose runner finds
// child/script-worker.cjs beside dist/, as it does once installed (package.json `files`).
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const BUILT = existsSync(join(dist, 'index.mjs')) && existsSync(join(dist, 'index.cjs'));

type RunnerModule = typeof import('../src/index.js');

const group = (fields: Partial<CheckGroup>): CheckGroup => ({ ...checkGroupFixture({ name: 'built', ...fields }), id: 1, accountId: 'account-1' });

describe('the package ships its script worker', () => {
  it('in `files`, beside dist/', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] };
    expect(manifest.files).toEqual(expect.arrayContaining(['dist', 'child']));
    expect(existsSync(join(root, 'child', 'script-worker.cjs'))).toBe(true);
  });
});

describe.runIf(BUILT)('the built runner (dist, after npm run build)', () => {
  const serve = localServers();

  const builds: [string, () => Promise<RunnerModule>][] = [
    ['ESM', async () => (await import(pathToFileURL(join(dist, 'index.mjs')).href)) as RunnerModule],
    ['CJS', async () => createRequire(import.meta.url)(join(dist, 'index.cjs')) as RunnerModule],
  ];

  it.each(builds)('%s: runs setup and teardown in their own processes', async (_name, load) => {
    const { httpRunner } = await load();
    const server = await serve(json(200, { status: 'ok' }));
    const runner = httpRunner({ scriptTimeoutMs: 5_000 });
    const job = {
      ...apiJob({ request: { url: `${server.origin}/` }, job: { environment: { REGION: 'eu' } } }),
      group: group({
        localSetupScript: "request.headers['X-Region'] = process.env.REGION; request.headers['X-Keys'] = Object.keys(process.env).join(',');",
        localTearDownScript: "assert.equal(JSON.parse(response.body).status, 'down', 'the built teardown ran');",
      }),
    };
    const result = await runner.run(job, new AbortController().signal);
    expect(server.seen[0]!.headers).toMatchObject({ 'x-region': 'eu', 'x-keys': 'REGION' });
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    expect(result.errorMessage).toBe("Teardown failed: AssertionError: the built teardown ran (the group's localTearDownScript, line 1)");
  });
});
