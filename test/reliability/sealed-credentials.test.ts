/**
 * Credentials nobody flagged secret stay out of the database, the logs and the API's answers: a
 * webhook's unlocked headers (an Authorization, an X-Api-Key), the URLs of CHAT and CHAT_APP
 * channels, an API check's Authorization and X-Api-Key headers and basic-auth password, a check group's
 * apiCheckDefaults Cookie header and basic-auth password, each with its own random value. An API
 * check, and one that takes its credentials from its group's defaults, run against a local
 * receiver, fail and alert every channel; a client reads everything back and writes the masked
 * values back as it read them. Then none of the values may
 * be found (as they are, or encoded) in any row or, on SQLite, the database files, in any log
 * entry, or in any API response. Header values that are no credential (X-Team, X-Plain) are sealed
 * in their channel, check or group too, and shown in responses as they are; a run's result records the
 * request it sent with its credentials masked, and such a header as it was sent.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRunner } from '@vigil/runner-http';
import { alertTransports } from '@vigil/alert-channels';
import { Receiver } from '../../packages/alert-channels/test/support/receiver.js';
import { findSecrets, report, secretValue, type Haystack } from './support/leaks.js';
import { BACKENDS, logText, newAccount, startStack, type Account, type Stack } from './support/stack.js';
import { expectStatus, until } from './support/world.js';

const MASK = '********';
/** A value that can be a URL's path as it is. */
const pathValue = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

describe.each(BACKENDS)('sealed credentials on %s', (backend) => {
  const s = {
    HOOK_AUTH: secretValue('hook-auth'),
    HOOK_KEY: secretValue('hook-key'),
    CHAT_PATH: pathValue('chat-path'),
    CHAT_APP_PATH: pathValue('chat-app-path'),
    API_AUTH: secretValue('api-auth'),
    API_BASIC: secretValue('api-basic'),
    API_KEY: secretValue('api-key'),
    GROUP_COOKIE: secretValue('group-cookie'),
    GROUP_BASIC: secretValue('group-basic'),
  };
  /** Sealed at rest, shown in responses. */
  const shown = { HOOK_PLAIN: secretValue('hook-plain'), API_PLAIN: secretValue('api-plain'), GROUP_PLAIN: secretValue('group-plain') };
  let stack: Stack;
  let account: Account;
  let receiver: Receiver;
  const api = (method: 'get' | 'post' | 'put', path: string, body?: unknown) => stack.api(method, path, account.credentials, body);

  beforeAll(async () => {
    receiver = await Receiver.start();
    receiver.fallback = () => ({ status: 202, body: { ok: true } });
    stack = await startStack(backend, {
      runners: [httpRunner({ lookup: async () => ({ address: '127.0.0.1', family: 4 }) })],
      transports: alertTransports({}),
    });
    await stack.vigil.start();
    account = await newAccount(stack, 'Sealed');
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it('plants a credential in every field, runs and alerts; none is found in the database, the logs or any API response', async () => {
    const hookHeaders = [
      { key: 'Authorization', value: `Bearer ${s.HOOK_AUTH}`, locked: false },
      { key: 'X-Api-Key', value: s.HOOK_KEY, locked: false },
      { key: 'X-Team', value: shown.HOOK_PLAIN, locked: false },
    ];
    const channels = [
      { type: 'WEBHOOK', config: { name: 'hook', url: `${receiver.url}/hook`, headers: hookHeaders } },
      { type: 'CHAT', config: { url: `${receiver.url}/chat/${s.CHAT_PATH}` } },
      { type: 'CHAT_APP', config: { url: `${receiver.url}/chat-app/${s.CHAT_APP_PATH}` } },
    ];
    const made: { id: number; config: { headers?: unknown[]; url?: string } }[] = [];
    for (const c of channels) made.push(expectStatus(await api('post', '/v1/alert-channels', c), 201));
    const maskedHeaders = [{ key: 'Authorization', value: MASK, locked: false }, { key: 'X-Api-Key', value: MASK, locked: false }, { key: 'X-Team', value: shown.HOOK_PLAIN, locked: false }];
    expect(made[0]!.config.headers).toEqual(maskedHeaders);
    expect(made[1]!.config.url).toBe(`${new URL(receiver.url).origin}/${MASK}`);

    const check = expectStatus(await api('post', '/v1/checks/api', {
      name: 'sealed api', frequency: 1440, retryStrategy: null, doubleCheck: false,
      request: {
        url: `${receiver.url}/api`,
        headers: [{ key: 'Authorization', value: `Bearer ${s.API_AUTH}` }, { key: 'X-Api-Key', value: s.API_KEY }, { key: 'X-Plain', value: shown.API_PLAIN }],
        basicAuth: { username: 'svc', password: s.API_BASIC },
        // The receiver answers 202: the run fails, and alerts.
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      },
    }), 201);
    expect(check.request.headers).toEqual([{ key: 'Authorization', value: MASK }, { key: 'X-Api-Key', value: MASK }, { key: 'X-Plain', value: shown.API_PLAIN }]);
    expect(check.request.basicAuth).toEqual({ username: 'svc', password: MASK });
    expect(check.alertChannels.webhook[0].headers).toEqual(maskedHeaders);
    expect(check.alertChannels.chat).toEqual(expect.arrayContaining([{ url: `${new URL(receiver.url).origin}/${MASK}` }]));

    // A group whose defaults carry credentials, and a member that has none of its own.
    const groupHeaders = [{ key: 'Cookie', value: `sid=${s.GROUP_COOKIE}` }, { key: 'X-Group-Plain', value: shown.GROUP_PLAIN }];
    const group = expectStatus(await api('post', '/v2/check-groups', {
      name: 'sealed group', apiCheckDefaults: { url: receiver.url, headers: groupHeaders, basicAuth: { username: 'grp', password: s.GROUP_BASIC } },
    }), 201);
    const maskedGroupDefaults = { headers: [{ key: 'Cookie', value: MASK }, { key: 'X-Group-Plain', value: shown.GROUP_PLAIN }], basicAuth: { username: 'grp', password: MASK } };
    expect(group.apiCheckDefaults).toMatchObject(maskedGroupDefaults);
    expect(expectStatus(await api('get', `/v2/check-groups/${group.id}`), 200).apiCheckDefaults).toMatchObject(maskedGroupDefaults);
    const member = expectStatus(await api('post', '/v1/checks/api', {
      name: 'sealed member', groupId: group.id, frequency: 1440, retryStrategy: null, doubleCheck: false,
      request: { url: '/group-api', assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    }), 201);

    const { sessions } = expectStatus(await api('post', '/v1/check-sessions/trigger', { target: { checkId: [check.id, member.id] } }), 201);
    for (const session of sessions as { checkSessionId: string }[]) {
      const done = expectStatus(await api('get', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=30`), 200);
      expect(done.status, JSON.stringify(done.results)).toBe('FAILED');
    }
    const delivered = async (id: number) => ((await api('get', `/v1/alert-channels/${id}/deliveries?limit=100`)).body as { ok: boolean }[]).some((d) => d.ok);
    await until(async () => (await Promise.all(made.map((c) => delivered(c.id)))).every(Boolean), 'every channel to deliver the alert', 20_000);

    // The runner and the transports got the opened values.
    const run = receiver.requests.find((r) => r.path === '/api')!;
    expect(run.headers.authorization).toMatch(/^(Bearer|Basic) /);
    expect(run.headers['x-plain']).toBe(shown.API_PLAIN);
    expect(run.headers['x-api-key']).toBe(s.API_KEY);
    const memberRun = receiver.requests.find((r) => r.path === '/group-api')!;
    expect(memberRun.headers).toMatchObject({
      cookie: `sid=${s.GROUP_COOKIE}`,
      authorization: `Basic ${Buffer.from(`grp:${s.GROUP_BASIC}`).toString('base64')}`,
      'x-group-plain': shown.GROUP_PLAIN,
    });
    const hook = receiver.requests.find((r) => r.path === '/hook')!;
    expect(hook.headers).toMatchObject({ authorization: `Bearer ${s.HOOK_AUTH}`, 'x-api-key': s.HOOK_KEY, 'x-team': shown.HOOK_PLAIN });
    expect(receiver.requests.some((r) => r.path === `/chat/${s.CHAT_PATH}`)).toBe(true);
    expect(receiver.requests.some((r) => r.path === `/chat-app/${s.CHAT_APP_PATH}`)).toBe(true);
    const forRun = await stack.vigil.checks.getForRun(account.id, check.id);
    expect(forRun.check.checkType === 'API' && forRun.check.request).toMatchObject({
      headers: [{ key: 'Authorization', value: `Bearer ${s.API_AUTH}` }, { key: 'X-Api-Key', value: s.API_KEY }, { key: 'X-Plain', value: shown.API_PLAIN }],
      basicAuth: { username: 'svc', password: s.API_BASIC },
    });

    // A client writes back what it read: masked values keep the stored ones.
    for (const c of made) {
      const read = expectStatus(await api('get', `/v1/alert-channels/${c.id}`), 200);
      expectStatus(await api('put', `/v1/alert-channels/${c.id}`, { config: read.config, sendDegraded: true }), 200);
    }
    const read = expectStatus(await api('get', `/v1/checks/api/${check.id}`), 200);
    expectStatus(await api('put', `/v1/checks/api/${check.id}`, { name: read.name, request: read.request }), 200);
    const readGroup = expectStatus(await api('get', `/v2/check-groups/${group.id}`), 200);
    expectStatus(await api('put', `/v2/check-groups/${group.id}`, { name: readGroup.name, apiCheckDefaults: readGroup.apiCheckDefaults }), 200);
    expect((await stack.vigil.checks.getForRun(account.id, member.id)).check).toMatchObject({
      request: { headers: groupHeaders, basicAuth: { username: 'grp', password: s.GROUP_BASIC } },
    });
    expect((await stack.vigil.alertChannels.getForDelivery(account.id, made[0]!.id)).config).toMatchObject({ headers: hookHeaders });
    expect((await stack.vigil.alertChannels.getForDelivery(account.id, made[1]!.id)).config).toMatchObject({ url: channels[1]!.config.url });
    expect((await stack.vigil.checks.getForRun(account.id, check.id)).check).toMatchObject({ request: { basicAuth: { password: s.API_BASIC } } });
    expectStatus(await api('get', '/v1/checks'), 200);
    expectStatus(await api('get', '/v1/alert-channels'), 200);
    expectStatus(await api('get', '/v2/check-groups'), 200);
    expectStatus(await api('get', `/v1/check-results/${check.id}`), 200);
    await stack.vigil.stop();

    const dump = await stack.dump();
    const stored: Haystack[] = [
      ...Object.entries(dump).flatMap(([table, rows]) => rows.map((row, i) => ({ where: `table ${table} row ${i}`, text: JSON.stringify(row) }))),
      ...(await stack.rawText()).map((text, i) => ({ where: backend === 'sqlite' ? `database file ${i}` : `row text ${i}`, text })),
    ];
    const logs = stack.logs.map((entry, i) => ({ where: `log entry ${i}`, text: logText(entry) }));
    const responses = stack.responses.map((r, i) => ({ where: `response ${i} to ${r.method} ${r.path} (${r.status})`, text: `${r.headers}\n${r.text}` }));
    // The scan reads real data: the name of the check is stored and answered.
    expect(findSecrets({ name: 'sealed api' }, stored).length).toBeGreaterThan(0);
    expect(findSecrets({ shown: shown.HOOK_PLAIN }, responses).length).toBeGreaterThan(0);
    // A group's header that is no credential is sealed in its row (a run's result records it as sent).
    const groupRows = stored.filter((h) => /^table \w*check_groups row /.test(h.where));
    expect(findSecrets({ name: 'sealed group' }, groupRows).length).toBeGreaterThan(0);
    expect(findSecrets({ GROUP_PLAIN: shown.GROUP_PLAIN }, groupRows)).toEqual([]);

    const findings = [...findSecrets({ ...s, HOOK_PLAIN: shown.HOOK_PLAIN }, [...stored, ...logs]), ...findSecrets(s, responses)];
    expect(findings, report(findings)).toEqual([]);
  }, 120_000);
});
