// Two accounts on one host, as src/assemble.mjs sets their target policies: the host's own
// account (VIGIL_TARGET_POLICY, open by default) reaches the host's own routes; a tenant's account
// is public-only, so its API checks never reach this machine, however its address is written.
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError, type Vigil } from '@vigil/core';
import { accountTargetPolicy, assembleVigil, hostAccountId } from '../src/assemble.mjs';

const SECRET_BODY = 'host-only: db_password=hunter2';
const dir = mkdtempSync(join(tmpdir(), 'vigil-target-policy-'));
const settings = { db: join(dir, 'vigil.sqlite'), postgres: false, stateDir: join(dir, 'state') };
let server: Server;
let port = 0;
let hits = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(SECRET_BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** The ways of writing this machine's address in a URL that a tenant might try. */
const spellings = () => [
  `http://127.0.0.1:${port}/metrics`,
  `http://2130706433:${port}/metrics`,
  `http://0x7f000001:${port}/metrics`,
  `http://0177.0.0.1:${port}/metrics`,
  `http://127.1:${port}/metrics`,
  `http://[::ffff:127.0.0.1]:${port}/metrics`,
];

const apiCheck = (url: string) => ({ name: url, request: { url }, frequency: 0, frequencyOffset: 10 });

/** Runs one check now and answers its stored results. */
async function runNow(vigil: Vigil, accountId: string, checkId: string) {
  const { sessions } = await vigil.checkSessions.trigger(accountId, { target: { checkId: [checkId] } });
  const { done } = await vigil.checkSessions.completion(accountId, sessions[0]!.checkSessionId, { maxWaitSeconds: '30' });
  expect(done).toBe(true);
  return (await vigil.checkResults.list(accountId, checkId, {})).items;
}

describe('example host: a target policy per account', () => {
  it('reads VIGIL_TARGET_POLICY for its own account, and holds every other account public-only', () => {
    const own = hostAccountId(settings.stateDir);
    expect(accountTargetPolicy(settings.stateDir, {})(own)).toBe('open');
    expect(accountTargetPolicy(settings.stateDir, { VIGIL_TARGET_POLICY: 'public-only' })(own)).toBe('public-only');
    expect(accountTargetPolicy(settings.stateDir, {})('tenant')).toBe('public-only');
    expect(() => accountTargetPolicy(settings.stateDir, { VIGIL_TARGET_POLICY: 'closed' })).toThrow('VIGIL_TARGET_POLICY must be open or public-only');
  });

  it("a public-only account's API checks never reach this machine; the host's own account's do", async () => {
    // Checks the tenant wrote while the host still let every account reach every address.
    const before = assembleVigil(settings, { targetPolicy: 'open' });
    const tenant = (await before.accounts.ensure()).id;
    const written = [];
    for (const url of spellings()) written.push(await before.checks.create(tenant, 'API', apiCheck(url)));
    await before.stop(0);

    const vigil = assembleVigil(settings);
    try {
      const own = (await vigil.accounts.ensure(hostAccountId(settings.stateDir))).id;
      // Now each of those URLs is refused when written, naming the field.
      for (const url of spellings()) {
        const err = await vigil.checks.create(tenant, 'API', apiCheck(url)).then(() => null, (e: unknown) => e);
        expect(err, url).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).issues.map((i) => i.path)).toEqual(['request.url']);
      }
      await vigil.start();

      // And the ones written before fail at run time with the policy's refusal: nothing connected.
      for (const check of written) {
        const results = await runNow(vigil, tenant, check.id);
        expect(results.length, check.name).toBeGreaterThan(0);
        for (const r of results) {
          expect(r.hasErrors || r.hasFailures).toBe(true);
          expect(r.statusCode).toBeNull();
          expect(r.errorMessage).toMatch(/^The target policy refused .*127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/);
        }
        expect(JSON.stringify(results)).not.toContain('hunter2');
      }
      expect(hits).toBe(0);

      // The host's own account reaches the same server.
      for (const url of [`http://127.0.0.1:${port}/metrics`, `http://2130706433:${port}/metrics`]) {
        const check = await vigil.checks.create(own, 'API', apiCheck(url));
        const results = await runNow(vigil, own, check.id);
        expect(results.map((r) => [r.statusCode, r.hasErrors, r.hasFailures])).toContainEqual([200, false, false]);
      }
      // Both reached it (a scheduled run of these every-10-seconds checks may have come due too).
      expect(hits).toBeGreaterThanOrEqual(2);
    } finally {
      await vigil.stop(0);
    }
  }, 60_000);
});
