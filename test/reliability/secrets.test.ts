/**
 * Secrets stay secret, proven over a whole run of a host: an account with one of every resource,
 * plus everything that holds a secret, each with its own random value:
 *
 * - a client certificate (its private key, encrypted, and the key's passphrase);
 * - secret variables of a check group (flagged `secret`, and named `SERVICE_SECRET_*` with the flag
 *   off) that an API check sends as a header, a query parameter, a JSON body, a basic-auth
 *   password and in its group's setup script's logs, and a TCP check sends as its data; secret
 *   variables of a browser check (stored; the check-level variables Vigil has). Vigil has no
 *   account-level variables;
 * - alert channels with secrets: a webhook's signing secret, its locked headers (a bearer token and
 *   basic auth) and locked query parameter, the paging providers' keys; and the host's own provider
 *   credentials: the SMTP password and the SMS/call provider token;
 * - the account's API key and the host's secret key.
 *
 * The checks run through the engine against local servers (an HTTPS server that demands the client
 * certificate and echoes what it got, a TCP server that echoes), fail, and alert every channel
 * (local receivers, a local SMTP server). A client reads every resource back and writes the masked
 * values back as it read them. Then none of the values may be found, as they are, URL-encoded,
 * JSON-escaped, hex or base64 (at any offset) in: every row of every table (and on SQLite the
 * database files themselves), every entry the Logger port got, every API response of the run.
 * Positive controls show the values did reach the servers and a non-secret value is found.
 */
import { createHmac } from 'node:crypto';
import https from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tcpRunner } from '@vigil/runner-tcp';
import { httpRunner, multiStepRunner } from '@vigil/runner-http';
import { alertTransports } from '@vigil/alert-channels';
import { Receiver } from '../../packages/alert-channels/test/support/receiver.js';
import { SmtpSink } from '../../packages/alert-channels/test/support/smtp.js';
import { findSecrets, report, secretValue, type Haystack } from './support/leaks.js';
import { makePki, type Pki } from './support/pki.js';
import { mountedRoutes, ownReads, uncovered } from './support/routes.js';
import { BACKENDS, logText, newAccount, startStack, type Account, type Stack } from './support/stack.js';
import { closedPort, expectStatus, seedWorld, selfSigned, until, type Pem, type World } from './support/world.js';

const MASK = '********';

/** Every secret of the run, by name; each value is random and found nowhere else. */
function makeSecrets() {
  return {
    CERT_PASSPHRASE: secretValue('cert-passphrase'),
    GROUP_FLAGGED: secretValue('group-flagged'),
    GROUP_PREFIXED: secretValue('group-prefixed'),
    BASIC_PASSWORD: secretValue('basic-password'),
    TCP_DATA: secretValue('tcp-data'),
    BROWSER_FLAGGED: secretValue('browser-flagged'),
    BROWSER_PREFIXED: secretValue('browser-prefixed'),
    WEBHOOK_SIGNING: secretValue('webhook-signing'),
    WEBHOOK_BEARER: secretValue('webhook-bearer'),
    WEBHOOK_BASIC: secretValue('webhook-basic'),
    WEBHOOK_QUERY: secretValue('webhook-query'),
    PAGING_A_KEY: secretValue('paging-a-key'),
    PAGING_B_KEY: secretValue('paging-b-key'),
    SMTP_PASSWORD: secretValue('smtp-password'),
    PHONE_TOKEN: secretValue('phone-token'),
    MULTISTEP_TOKEN: secretValue('multistep-token'),
  };
}
type Secrets = ReturnType<typeof makeSecrets>;

/** The base64 lines of a PEM body: each one is part of the key. */
const pemLines = (pem: string) => pem.split('\n').filter((l) => /^[A-Za-z0-9+/=]{40,}$/.test(l));

/** An HTTPS server that demands a client certificate of the CA and answers with what it got. */
async function echoServer(pki: Pki) {
  const seen: { url: string; headers: Record<string, unknown>; body: string; cn: string | null }[] = [];
  const server = https.createServer({ key: pki.serverKey, cert: pki.serverCert, requestCert: true, rejectUnauthorized: true, ca: pki.caCert }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const cn = (req.socket as import('node:tls').TLSSocket).getPeerCertificate()?.subject?.CN ?? null;
      seen.push({ url: req.url ?? '', headers: req.headers, body, cn: cn ? String(cn) : null });
      res.writeHead(200, { 'content-type': 'application/json' });
      // As echo APIs do (httpbin's /anything): the request comes back in the answer.
      res.end(JSON.stringify({ url: req.url, headers: req.headers, body }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, seen, port: (server.address() as AddressInfo).port };
}

/** A TCP server that answers every line with `ECHO <line>`. */
async function tcpEcho() {
  const seen: string[] = [];
  const server: TcpServer = createTcpServer((socket) => {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      seen.push(d);
      socket.end(`ECHO ${d}`);
    });
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, seen, port: (server.address() as AddressInfo).port };
}

describe.each(BACKENDS)('secrets on %s', (backend) => {
  const s: Secrets = makeSecrets();
  let pki: Pki;
  let stack: Stack;
  let account: Account;
  let world: World;
  let seedPem: Pem;
  let receiver: Receiver;
  let smtp: SmtpSink;
  let echo: Awaited<ReturnType<typeof echoServer>>;
  let tcp: Awaited<ReturnType<typeof tcpEcho>>;
  const plain = `plain-${Date.now().toString(36)}-visible`;

  const api = (method: 'get' | 'post' | 'put', path: string, body?: unknown) => stack.api(method, path, account.credentials, body);

  beforeAll(async () => {
    pki = makePki(s.CERT_PASSPHRASE);
    receiver = await Receiver.start();
    receiver.fallback = (r) => (r.path.includes('/Accounts/') ? { status: 201, body: { sid: 'SM1' } } : { status: 202, body: { ok: true } });
    smtp = await SmtpSink.start({ auth: { user: 'vigil', pass: s.SMTP_PASSWORD } });
    echo = await echoServer(pki);
    tcp = await tcpEcho();
    stack = await startStack(backend, {
      runners: [tcpRunner(), httpRunner({ lookup: async () => ({ address: '127.0.0.1', family: 4 }) }), multiStepRunner()],
      transports: alertTransports({
        email: { smtp: { host: '127.0.0.1', port: smtp.port, auth: { user: 'vigil', pass: s.SMTP_PASSWORD } }, from: 'vigil@example.com' },
        phone: { baseUrl: `${receiver.url}/phone`, accountSid: 'AC123', authToken: s.PHONE_TOKEN, from: '+14155550199' },
        pagingA: { baseUrl: `${receiver.url}/paging-a` },
        pagingB: { baseUrls: { EU: `${receiver.url}/paging-b`, US: `${receiver.url}/paging-b` } },
      }),
    });
    await stack.vigil.start();
    account = await newAccount(stack, 'Secretive');
    // One of every resource first, with the seeded secrets of its own.
    seedPem = selfSigned('seed.internal');
    world = await seedWorld(stack, account, { hookUrl: receiver.url, port: await closedPort(), pem: seedPem });
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    await smtp?.close();
    echo?.server.closeAllConnections();
    echo?.server.close();
    tcp?.server.close();
  });

  it('runs checks and alerts that use every secret; none of them is found in the database, the logs or any API response', async () => {
    expect(uncovered(mountedRoutes(stack.vigil))).toEqual([]);
    const basicHeader = `Basic ${Buffer.from(`hook:${s.WEBHOOK_BASIC}`).toString('base64')}`;

    // Channels first: the group subscribes to every channel of the account.
    const channels = [
      { type: 'WEBHOOK', config: {
        name: 'ops hook', url: `${receiver.url}/hook`, webhookSecret: s.WEBHOOK_SIGNING,
        headers: [{ key: 'Authorization', value: basicHeader, locked: true }, { key: 'X-Hook-Token', value: `Bearer ${s.WEBHOOK_BEARER}`, locked: true }, { key: 'X-Team', value: plain }],
        queryParameters: [{ key: 'token', value: s.WEBHOOK_QUERY, locked: true }],
      } },
      { type: 'PAGING_A', config: { serviceKey: s.PAGING_A_KEY, serviceName: 'orders' } },
      { type: 'PAGING_B', config: { name: 'ops', apiKey: s.PAGING_B_KEY, region: 'US' } },
      { type: 'EMAIL', config: { address: 'ops@example.com' } },
      { type: 'SMS', config: { number: '+14155550100', name: 'on call' } },
      { type: 'CALL', config: { number: '+14155550101', name: 'escalation' } },
      { type: 'CHAT', config: { url: `${receiver.url}/chat` } },
    ];
    const made = [];
    for (const c of channels) made.push(expectStatus(await api('post', '/v1/alert-channels', c), 201));
    // Locked entries answer masked like the signing secret; the unlocked one as it is.
    expect(made[0].config).toMatchObject({
      webhookSecret: MASK,
      headers: [{ key: 'Authorization', value: MASK, locked: true }, { key: 'X-Hook-Token', value: MASK, locked: true }, { key: 'X-Team', value: plain, locked: false }],
      queryParameters: [{ key: 'token', value: MASK, locked: true }],
    });
    const certificate = expectStatus(await api('post', '/v1/client-certificates', { host: '*.mtls.test', cert: pki.clientCert, key: pki.clientKey, passphrase: s.CERT_PASSPHRASE, ca: pki.caCert }), 201);

    const group = expectStatus(await api('post', '/v2/check-groups', {
      name: 'payments',
      environmentVariables: [
        { key: 'API_TOKEN', value: s.GROUP_FLAGGED, secret: true },
        { key: 'SERVICE_SECRET_QUERY', value: s.GROUP_PREFIXED, secret: false },
        { key: 'SERVICE_SECRET_BASIC', value: s.BASIC_PASSWORD },
        { key: 'TCP_TOKEN', value: s.TCP_DATA, secret: true },
        { key: 'PLAIN', value: plain },
      ],
      apiCheckDefaults: { url: `https://api.mtls.test:${echo.port}` },
      localSetupScript: [
        "console.log('token', process.env.API_TOKEN);",
        "console.log('encoded', encodeURIComponent(process.env.API_TOKEN), Buffer.from(process.env.SERVICE_SECRET_QUERY).toString('base64'));",
        "request.headers['X-Setup'] = process.env.API_TOKEN;",
      ].join('\n'),
    }), 201);
    const apiCheck = expectStatus(await api('post', '/v1/checks/api', {
      name: 'payments api', groupId: group.id, frequency: 1440, retryStrategy: null, doubleCheck: false,
      request: {
        method: 'POST', url: '/charge', queryParameters: [{ key: 'token', value: '{{SERVICE_SECRET_QUERY}}' }], bodyType: 'JSON', body: '{"token":"{{API_TOKEN}}","plain":"{{PLAIN}}"}',
        headers: [{ key: 'X-Api-Token', value: '{{API_TOKEN}}' }, { key: 'X-Plain', value: '{{PLAIN}}' }],
        basicAuth: { username: 'svc', password: '{{SERVICE_SECRET_BASIC}}' },
        assertions: [
          { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
          { source: 'TEXT_BODY', comparison: 'CONTAINS', target: '{{API_TOKEN}}' },
          // Fails, so that the run alerts; the message shows what the body held.
          { source: 'JSON_BODY', property: '$.body', comparison: 'EQUALS', target: 'what the secret is not' },
        ],
      },
    }), 201);
    // A check shows the channels it alerts with the same masks.
    expect(apiCheck.alertChannels.webhook).toContainEqual(expect.objectContaining({
      name: 'ops hook',
      headers: [{ key: 'Authorization', value: MASK, locked: true }, { key: 'X-Hook-Token', value: MASK, locked: true }, { key: 'X-Team', value: plain, locked: false }],
      queryParameters: [{ key: 'token', value: MASK, locked: true }],
    }));
    const tcpCheck = expectStatus(await api('post', '/v1/checks/tcp', {
      name: 'payments tcp', groupId: group.id, frequency: 1440, retryStrategy: null, doubleCheck: false,
      request: { hostname: '127.0.0.1', port: tcp.port, data: 'AUTH {{TCP_TOKEN}}\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'ECHO nothing' }] },
    }), 201);
    const browser = expectStatus(await api('post', '/v1/checks/browser', {
      name: 'checkout', activated: false, script: 'await page.goto(process.env.URL)',
      environmentVariables: [{ key: 'LOGIN', value: s.BROWSER_FLAGGED, secret: true }, { key: 'SERVICE_SECRET_PIN', value: s.BROWSER_PREFIXED }],
    }), 201);
    // A multi-step check sends its secret variable as a Bearer token, in a query and in a body, and fails on the answer.
    const multiStep = expectStatus(await api('post', '/v1/checks/multistep', {
      name: 'payments flow', frequency: 1440, retryStrategy: null, doubleCheck: false,
      environmentVariables: [{ key: 'PAY_TOKEN', value: s.MULTISTEP_TOKEN, secret: true }, { key: 'PAY_URL', value: `${receiver.url}/multistep` }],
      script: `await step('Charge', async () => {
  const res = await request.post(process.env.PAY_URL + '?token=' + encodeURIComponent(process.env.PAY_TOKEN), {
    headers: { Authorization: 'Bearer ' + process.env.PAY_TOKEN }, data: { token: process.env.PAY_TOKEN },
  });
  console.log('charged with', process.env.PAY_TOKEN);
  expect(res.status()).toBe(500);
});`,
    }), 201);
    const ids = { webhook: made[0].id as number, channels: made.map((c) => c.id as number) };

    // Runs through the engine, in a session of a test project (error groups of the project too).
    const { sessions } = expectStatus(await api('post', '/v1/check-sessions/trigger', { target: { checkId: [apiCheck.id, tcpCheck.id, multiStep.id] }, projectId: 'payments' }), 201);
    for (const session of sessions as { checkSessionId: string }[]) {
      const done = expectStatus(await api('get', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=30`), 200);
      expect(done.status, JSON.stringify(done.results)).toBe('FAILED');
    }
    // Every channel of the account got both alerts (the seeded checks' own webhook got one more).
    const delivered = async (id: number) => ((await api('get', `/v1/alert-channels/${id}/deliveries?limit=100`)).body as { ok: boolean }[]).filter((d) => d.ok).length;
    const everyChannel = [...ids.channels, ...world.ids.channel.map(Number)];
    await until(async () => (await Promise.all(everyChannel.map(delivered))).every((n) => n >= 2), 'every channel to deliver both alerts', 20_000);

    // The secrets did reach where they were meant to: the scan below is not empty by accident.
    const charge = echo.seen.find((r) => r.url.startsWith('/charge'))!;
    expect(charge.cn).toBe('vigil-client');
    expect(new URL(charge.url, 'https://x').searchParams.get('token')).toBe(s.GROUP_PREFIXED);
    expect(charge.headers['x-api-token']).toBe(s.GROUP_FLAGGED);
    expect(charge.headers['x-setup']).toBe(s.GROUP_FLAGGED);
    expect(charge.headers.authorization).toBe(`Basic ${Buffer.from(`svc:${s.BASIC_PASSWORD}`).toString('base64')}`);
    expect(JSON.parse(charge.body)).toEqual({ token: s.GROUP_FLAGGED, plain });
    expect(tcp.seen).toContain(`AUTH ${s.TCP_DATA}\n`);
    const charged = receiver.requests.find((r) => r.path === '/multistep')!;
    expect(charged.headers.authorization).toBe(`Bearer ${s.MULTISTEP_TOKEN}`);
    expect(charged.query.token).toBe(s.MULTISTEP_TOKEN);
    // What the echo server answered is stored scrubbed, the basic-auth pair's base64 too.
    const [apiResult] = expectStatus(await api('get', `/v1/check-results/${apiCheck.id}`), 200);
    expect(apiResult.details.response.body).toContain('"authorization":"Basic ********"');
    expect(apiResult.details.response.body).toContain('"x-api-token":"********"');
    const hook = receiver.requests.find((r) => r.path === '/hook' && r.query.token !== undefined)!;
    expect(hook.headers.authorization).toBe(basicHeader);
    expect(hook.headers['x-hook-token']).toBe(`Bearer ${s.WEBHOOK_BEARER}`);
    expect(hook.query.token).toBe(s.WEBHOOK_QUERY);
    expect(hook.headers['x-vigil-signature']).toBe(createHmac('sha256', s.WEBHOOK_SIGNING).update(hook.raw).digest('hex'));
    expect(receiver.requests.some((r) => (r.json as { routing_key?: string } | null)?.routing_key === s.PAGING_A_KEY)).toBe(true);
    expect(receiver.requests.some((r) => r.headers.authorization === `GenieKey ${s.PAGING_B_KEY}`)).toBe(true);
    expect(receiver.requests.some((r) => r.headers.authorization === `Basic ${Buffer.from(`AC123:${s.PHONE_TOKEN}`).toString('base64')}`)).toBe(true);
    expect(smtp.logins).toContainEqual({ user: 'vigil', pass: s.SMTP_PASSWORD });

    // A client writes back what it read: masked values keep the stored secrets.
    const readGroup = expectStatus(await api('get', `/v2/check-groups/${group.id}`), 200);
    expect(readGroup.environmentVariables.filter((v: { value: string }) => v.value === MASK)).toHaveLength(4);
    expectStatus(await api('put', `/v2/check-groups/${group.id}`, { ...readGroup, id: undefined, created_at: undefined, updated_at: undefined }), 200);
    const readBrowser = expectStatus(await api('get', `/v1/checks/browser/${browser.id}`), 200);
    expectStatus(await api('put', `/v1/checks/browser/${browser.id}`, { name: readBrowser.name, environmentVariables: readBrowser.environmentVariables }), 200);
    for (const id of ids.channels) {
      const read = expectStatus(await api('get', `/v1/alert-channels/${id}`), 200);
      expectStatus(await api('put', `/v1/alert-channels/${id}`, { config: read.config, sendDegraded: true }), 200);
    }
    const hookChannel = await stack.vigil.alertChannels.getForDelivery(account.id, ids.webhook);
    expect(hookChannel.config).toMatchObject({
      webhookSecret: s.WEBHOOK_SIGNING,
      headers: [{ key: 'Authorization', value: basicHeader, locked: true }, { key: 'X-Hook-Token', value: `Bearer ${s.WEBHOOK_BEARER}`, locked: true }, { key: 'X-Team', value: plain, locked: false }],
      queryParameters: [{ key: 'token', value: s.WEBHOOK_QUERY, locked: true }],
    });
    const forRun = await stack.vigil.checks.getForRun(account.id, apiCheck.id);
    expect(forRun.environment).toMatchObject({ API_TOKEN: s.GROUP_FLAGGED, SERVICE_SECRET_QUERY: s.GROUP_PREFIXED, SERVICE_SECRET_BASIC: s.BASIC_PASSWORD, TCP_TOKEN: s.TCP_DATA });
    expect((await stack.vigil.checks.getForRun(account.id, browser.id)).environment).toMatchObject({ LOGIN: s.BROWSER_FLAGGED, SERVICE_SECRET_PIN: s.BROWSER_PREFIXED });
    expect(await stack.vigil.clientCertificates.findForHost(account.id, 'api.mtls.test')).toMatchObject({ key: pki.clientKey, passphrase: s.CERT_PASSPHRASE });

    // Every read of the API with the account's ids: lists, each resource, results, sessions, analytics, deliveries.
    const own = {
      ...world.ids,
      check: [...world.ids.check, apiCheck.id, tcpCheck.id, browser.id, multiStep.id],
      group: [...world.ids.group, String(group.id)],
      channel: [...world.ids.channel, ...ids.channels.map(String)],
      certificate: [...world.ids.certificate, certificate.id],
      result: [...world.ids.result, ...((await api('get', `/v1/check-results/${apiCheck.id}`)).body as { id: string }[]).map((r) => r.id),
        ...((await api('get', `/v1/check-results/${tcpCheck.id}`)).body as { id: string }[]).map((r) => r.id),
        ...((await api('get', `/v1/check-results/${multiStep.id}`)).body as { id: string }[]).map((r) => r.id)],
      errorGroup: [...world.ids.errorGroup, ...((await api('get', `/v1/error-groups/checks/${apiCheck.id}`)).body as { id: string }[]).map((g) => g.id),
        ...((await api('get', `/v1/error-groups/checks/${tcpCheck.id}`)).body as { id: string }[]).map((g) => g.id)],
      session: [...world.ids.session, ...(sessions as { checkSessionId: string }[]).map((x) => x.checkSessionId)],
      project: [...world.ids.project, 'payments'],
    };
    let reads = 0;
    for (const route of mountedRoutes(stack.vigil)) {
      for (const call of ownReads(route, own)) {
        const res = await api('get', call.path);
        expect(res.status, `${call.path}: ${res.text.slice(0, 200)}`).toBeLessThan(500);
        reads++;
      }
    }
    expect(reads).toBeGreaterThan(100);
    const results = stack.responses.filter((r) => r.path.startsWith(`/v1/check-results/${apiCheck.id}/`) && r.status === 200);
    expect(results.length, 'the API check\'s results were read one by one').toBeGreaterThan(0);
    await stack.vigil.stop();

    const secrets: Record<string, string> = {
      ...s,
      API_KEY: account.key,
      HOST_SECRET_KEY: stack.secretKey,
      SEEDED_GROUP_SECRET: `${world.marker}-token`,
      SEEDED_BROWSER_SECRET: `${world.marker}-browser-token`,
      SEEDED_WEBHOOK_SIGNING: `${world.marker}-signing`,
      SEEDED_PAGING_A_KEY: `${world.marker}-routing-key`,
      SEEDED_PAGING_B_KEY: `${world.marker}-api-key`,
      ...Object.fromEntries(pemLines(pki.clientKey).map((line, i) => [`CERT_KEY_LINE_${i + 1}`, line])),
      ...Object.fromEntries(pemLines(seedPem.key).map((line, i) => [`SEEDED_KEY_LINE_${i + 1}`, line])),
    };
    const dump = await stack.dump();
    const haystacks: Haystack[] = [
      ...Object.entries(dump).flatMap(([table, rows]) => rows.map((row, i) => ({ where: `table ${table} row ${i}`, text: JSON.stringify(row) }))),
      ...(await stack.rawText()).map((text, i) => ({ where: backend === 'sqlite' ? `database file ${i}` : `row text ${i}`, text })),
      ...stack.logs.map((entry, i) => ({ where: `log entry ${i}`, text: logText(entry) })),
      ...stack.responses.map((r, i) => ({ where: `response ${i} to ${r.method} ${r.path} (${r.status})`, text: `${r.headers}\n${r.text}` })),
    ];
    // The scan reads real data: a value stored and shown on purpose is found in each place.
    expect(findSecrets({ plain }, haystacks.filter((h) => h.where.startsWith('table'))).length).toBeGreaterThan(0);
    expect(findSecrets({ plain }, haystacks.filter((h) => h.where.startsWith('response'))).length).toBeGreaterThan(0);
    // The engine logs each run with its (scrubbed) error, which quotes the plain value of the API check's body.
    expect(findSecrets({ plain }, haystacks.filter((h) => h.where.startsWith('log'))).length).toBeGreaterThan(0);
    expect(stack.responses.length).toBeGreaterThan(200);

    const findings = findSecrets(secrets, haystacks);
    expect(findings, report(findings)).toEqual([]);
  }, 120_000);
});
