/**
 * Credentials an API check sends in its headers stay out of what Vigil records, although none of
 * them is a secret variable: an `Authorization: Bearer {{TOKEN}}` filled from a plain variable of
 * the group, a `Proxy-Authorization` of the group's apiCheckDefaults, basic auth, a `Cookie`
 * header, an `Authorization` a group's setup script sets at run time, and the session cookie the
 * target sets in its answer.
 *
 * The target is a real HTTP server on 127.0.0.1 that echoes the credentials it got in its body
 * (as echo APIs do); every check asserts a text the body does not hold, so its failure message
 * quotes the body. The checks run through the engine in a test session; then none of the values
 * may be found, as they are or encoded (URL, JSON, hex, base64 at any offset), in the stored
 * results and error groups (every row, past the repositories), the API's answers for them, or any
 * entry the Logger port got.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRunner } from '@vigil/runner-http';
import { findSecrets, report, secretValue, type Haystack } from './support/leaks.js';
import { BACKENDS, logText, newAccount, startStack, type Account, type Stack } from './support/stack.js';
import { expectStatus } from './support/world.js';

const MASK = '********';

/** Answers 200 with the credentials the request carried, one per line, and sets a session cookie of its own. */
async function credentialEcho(sessionCookie: string) {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    const lines = ['authorization', 'proxy-authorization', 'cookie'].flatMap((name) => (req.headers[name] ? [`${name}: ${String(req.headers[name])}`] : []));
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    // As httpbin's /basic-auth does: the decoded credentials come back too.
    if (basic) lines.push(`user: ${Buffer.from(basic, 'base64').toString('utf8')}`);
    res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': `sid=${sessionCookie}; Path=/; HttpOnly` });
    res.end(lines.join('\n'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, seen, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.each(BACKENDS)('credential headers on %s', (backend) => {
  // The setup script makes its token at run time; the check's configuration never holds it.
  const setupSeed = randomBytes(16).toString('hex');
  const c = {
    BEARER: secretValue('bearer'),
    PROXY: secretValue('proxy'),
    BASIC_PASSWORD: secretValue('basic-password'),
    COOKIE: secretValue('cookie'),
    SETUP_TOKEN: createHash('sha256').update(setupSeed).digest('hex'),
    SESSION: secretValue('session'),
  };
  let stack: Stack;
  let account: Account;
  let echo: Awaited<ReturnType<typeof credentialEcho>>;
  const api = (method: 'get' | 'post', path: string, body?: unknown) => stack.api(method, path, account.credentials, body);

  beforeAll(async () => {
    echo = await credentialEcho(c.SESSION);
    stack = await startStack(backend, { runners: [httpRunner()] });
    await stack.vigil.start();
    account = await newAccount(stack, 'Credentials');
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    echo?.server.closeAllConnections();
    echo?.server.close();
  });

  it('scrubs header credentials from results, bodies, error groups and logs', async () => {
    const failing = [{ source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'all clear' }];
    const group = expectStatus(await api('post', '/v2/check-groups', {
      name: 'partners',
      environmentVariables: [{ key: 'TOKEN', value: c.BEARER, secret: false }],
      apiCheckDefaults: { url: echo.origin, headers: [{ key: 'Proxy-Authorization', value: `Bearer ${c.PROXY}` }] },
    }), 201);
    const scripted = expectStatus(await api('post', '/v2/check-groups', {
      name: 'signed in by setup',
      apiCheckDefaults: { url: echo.origin },
      localSetupScript: [
        `request.headers.Authorization = 'Bearer ' + require('node:crypto').createHash('sha256').update('${setupSeed}').digest('hex');`,
        "console.log('sending', request.headers.Authorization);",
      ].join('\n'),
    }), 201);
    const base = { frequency: 1440, retryStrategy: null, doubleCheck: false };
    const checks = [
      { ...base, name: 'bearer', groupId: group.id, request: { url: '/bearer', headers: [{ key: 'Authorization', value: 'Bearer {{TOKEN}}' }], assertions: failing } },
      { ...base, name: 'basic', request: { url: `${echo.origin}/basic`, basicAuth: { username: 'svc', password: c.BASIC_PASSWORD }, assertions: failing } },
      { ...base, name: 'cookie', request: { url: `${echo.origin}/cookie`, headers: [{ key: 'Cookie', value: `session=${c.COOKIE}; theme=dark` }], assertions: failing } },
      { ...base, name: 'setup', groupId: scripted.id, request: { url: '/setup', assertions: failing } },
    ];
    const ids: string[] = [];
    for (const check of checks) ids.push(expectStatus(await api('post', '/v1/checks/api', check), 201).id);

    const { sessions } = expectStatus(await api('post', '/v1/check-sessions/trigger', { target: { checkId: ids }, projectId: 'partners' }), 201);
    for (const session of sessions as { checkSessionId: string }[]) {
      const done = expectStatus(await api('get', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=30`), 200);
      expect(done.status, JSON.stringify(done.results)).toBe('FAILED');
    }

    // The credentials did reach the target, which echoed them: the scan below is not empty by accident.
    const sent = echo.seen.map((h) => JSON.stringify(h)).join('\n');
    expect(sent).toContain(`Bearer ${c.BEARER}`);
    expect(sent).toContain(`Bearer ${c.PROXY}`);
    expect(sent).toContain(`Basic ${Buffer.from(`svc:${c.BASIC_PASSWORD}`).toString('base64')}`);
    expect(sent).toContain(`session=${c.COOKIE}; theme=dark`);
    expect(sent).toContain(`Bearer ${c.SETUP_TOKEN}`);

    const results: Record<string, { errorMessage: string; details: { response: { body: string; headers: Record<string, unknown> }; request: { headers: Record<string, string> }; logs?: { text: string }[] } }> = {};
    const groups: { rawErrorMessage: string; cleanedErrorMessage: string }[] = [];
    for (const [i, id] of ids.entries()) {
      const [result] = expectStatus(await api('get', `/v1/check-results/${id}`), 200);
      expectStatus(await api('get', `/v1/check-results/${id}/${result.id}`), 200);
      results[checks[i]!.name] = result;
      const found = expectStatus(await api('get', `/v1/error-groups/checks/${id}`), 200);
      expect(found, checks[i]!.name).toHaveLength(1);
      groups.push(...found);
    }
    expectStatus(await api('get', '/v1/test-session-error-groups/projects/partners'), 200);

    // Each failure quotes the echoed body, with the credentials masked where they stood.
    expect(results.bearer!.errorMessage).toContain(`authorization: ${MASK}`);
    expect(results.bearer!.details.response.body).toContain(`proxy-authorization: ${MASK}`);
    expect(results.basic!.details.response.body).toContain(`authorization: Basic ${MASK}`);
    expect(results.basic!.details.response.body).toContain(`user: ${MASK}`);
    expect(results.cookie!.details.response.body).toContain(`cookie: ${MASK}`);
    expect(results.cookie!.details.request.headers.Cookie).toBe(MASK);
    expect(results.setup!.details.response.body).toContain(`authorization: ${MASK}`);
    expect(results.setup!.details.logs!.map((l) => l.text)).toEqual([`sending ${MASK}`]);
    for (const result of Object.values(results)) expect(result.details.response.headers['set-cookie']).toBe(MASK);
    for (const g of groups) expect(g.rawErrorMessage).toContain(MASK);
    await stack.vigil.stop();

    const dump = await stack.dump();
    // The checks and groups hold the headers as written: configuration, not something a run recorded.
    const recorded = Object.entries(dump).filter(([table]) => !['vigil_checks', 'vigil_check_groups'].includes(table));
    const haystacks: Haystack[] = [
      ...recorded.flatMap(([table, rows]) => rows.map((row, i) => ({ where: `table ${table} row ${i}`, text: JSON.stringify(row) }))),
      ...stack.logs.map((entry, i) => ({ where: `log entry ${i}`, text: logText(entry) })),
      ...stack.responses
        .filter((r) => !/^\/v[12]\/(checks|check-groups)\b/.test(r.path))
        .map((r, i) => ({ where: `response ${i} to ${r.method} ${r.path} (${r.status})`, text: `${r.headers}\n${r.text}` })),
    ];
    // The scan reads the stored runs: every table of results (full rows, the narrow rows of
    // scheduled runs and their detail documents) is in the dump, the checks' results are stored,
    // and both kinds of error groups are there.
    expect(Object.keys(dump)).toEqual(expect.arrayContaining(
      ['vigil_check_results', 'vigil_check_runs_tcp', 'vigil_check_runs_api', 'vigil_check_result_details'],
    ));
    let stored = 0;
    for (const id of ids) stored += (await stack.storage.checkResults.listByCheck(account.id, id, { limit: 1, offset: 0 })).total;
    expect(stored).toBeGreaterThanOrEqual(checks.length);
    expect(dump.vigil_error_groups).toHaveLength(checks.length);
    expect(dump.vigil_test_session_error_groups!.length).toBeGreaterThan(0);
    expect(stack.logs.some((e) => e.msg === 'run: finished' && String(e.meta.errorMessage).includes(MASK))).toBe(true);

    const findings = findSecrets(c, haystacks);
    expect(findings, report(findings)).toEqual([]);
  }, 90_000);
});
