import { RUNNERS, createVigil, resolveAll } from '@vigil/core';
import { memoryStorage, runnerSuite } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { httpRunner, registerHttpRunner } from '../src/index.js';
import { apiJob, assertion, json, localServers, startHttp, type ApiJobOptions } from './support.js';

/** A port nothing listens on: a server's, closed again. */
async function closedPort(): Promise<number> {
  const s = await startHttp(json(200, {}));
  await s.close();
  return s.port;
}

describe('HTTP runner conformance', () => {
  runnerSuite(it, async () => {
    const runner = httpRunner();
    const ok = await startHttp(json(200, { status: 'ok' }));
    const silent = await startHttp(() => undefined);
    // The server echoes the token, so the body, an assertion's actual value and the message would carry it.
    const echo = await startHttp((req, res) => res.end(`token=${String(req.headers['x-token'])}`));
    return {
      runner,
      passing: apiJob({ request: { url: `${ok.origin}/health`, assertions: [assertion('JSON_BODY', 'EQUALS', 'ok', { property: '$.status' })] } }),
      failing: apiJob({ request: { url: `http://127.0.0.1:${await closedPort()}/health` } }),
      hanging: apiJob({ request: { url: `${silent.origin}/` }, check: { maxResponseTime: null }, job: { timeoutMs: 20_000 } }),
      leakingSecret: apiJob({
        request: { url: `${echo.origin}/`, headers: [{ key: 'X-Token', value: '{{SERVICE_SECRET_TOKEN}}' }], assertions: [assertion('TEXT_BODY', 'EQUALS', 'token=other')] },
        job: { environment: { SERVICE_SECRET_TOKEN: 's3cr3t-t0ken' }, secrets: ['s3cr3t-t0ken'] },
      }),
      invalidCheck: { checkType: 'API', name: 'api', request: { url: 'https://api.example.com/', assertions: [{ source: 'RESPONSE_TIME', comparison: 'CONTAINS', target: 'fast' }] } },
      cleanup: async () => {
        for (const s of [ok, silent, echo]) await s.close();
      },
    };
  });
});

describe('httpRunner', () => {
  const serve = localServers();
  const runner = httpRunner();
  const run = (job: ApiJobOptions, r = runner) => r.run(apiJob(job), new AbortController().signal);

  describe('the request', () => {
    it('sends method, url with its query parameters appended, headers, basic auth and a JSON body', async () => {
      const server = await serve(json(201, { id: 7 }));
      const result = await run({
        request: {
          method: 'POST',
          url: `${server.origin}/orders?source=a%20b`,
          queryParameters: [{ key: 'tag', value: 'x&y' }, { key: 'tag', value: 'z' }],
          headers: [{ key: 'X-Request-Id', value: 'r-1' }],
          basicAuth: { username: 'ops', password: 'pw' },
          body: '{"item":"book"}',
          bodyType: 'JSON',
          assertions: [assertion('STATUS_CODE', 'EQUALS', '201')],
        },
      });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null, statusCode: 201 });
      const seen = server.seen[0]!;
      expect(seen).toMatchObject({ method: 'POST', url: '/orders?source=a%20b&tag=x%26y&tag=z', body: '{"item":"book"}' });
      expect(seen.headers).toMatchObject({
        'x-request-id': 'r-1',
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from('ops:pw').toString('base64')}`,
        'user-agent': 'Vigil-API-Check/0.1',
      });
      expect(result.details).toMatchObject({
        request: { method: 'POST', url: `${server.origin}/orders?source=a%20b&tag=x%26y&tag=z`, headers: { Authorization: '********', 'X-Request-Id': 'r-1' } },
        response: { statusCode: 201, body: '{"id":7}', bytesReceived: 8, truncated: false, headers: { 'content-type': 'application/json; charset=utf-8' } },
        remoteAddress: '127.0.0.1',
        redirects: [],
      });
    });

    it('gives a FORM body its content type and wraps a bare GRAPHQL query; NONE and HEAD send no body', async () => {
      const server = await serve(json(200, {}));
      await run({ request: { method: 'POST', url: `${server.origin}/form`, body: 'a=1&b=2', bodyType: 'FORM' } });
      await run({ request: { method: 'POST', url: `${server.origin}/gql`, body: '{ orders { id } }', bodyType: 'GRAPHQL' } });
      await run({ request: { method: 'POST', url: `${server.origin}/gql2`, body: '{"query":"{ a }","variables":{}}', bodyType: 'GRAPHQL' } });
      await run({ request: { method: 'POST', url: `${server.origin}/none`, body: 'ignored', bodyType: 'NONE' } });
      await run({ request: { method: 'HEAD', url: `${server.origin}/head`, body: 'ignored', bodyType: 'RAW' } });
      const [form, gql, gql2, none, head] = server.seen;
      expect(form).toMatchObject({ body: 'a=1&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(gql).toMatchObject({ body: JSON.stringify({ query: '{ orders { id } }' }), headers: { 'content-type': 'application/json' } });
      expect(gql2!.body).toBe('{"query":"{ a }","variables":{}}');
      expect(none!.body).toBe('');
      expect(none!.headers['content-type']).toBeUndefined();
      expect(head).toMatchObject({ method: 'HEAD', body: '' });
    });

    it('a Content-Type, Authorization or User-Agent the check sets wins over the ones the runner would add', async () => {
      const server = await serve(json(200, {}));
      await run({
        request: {
          method: 'PUT', url: `${server.origin}/`, body: '{}', bodyType: 'JSON', basicAuth: { username: 'u', password: 'p' },
          headers: [{ key: 'content-type', value: 'application/vnd.api+json' }, { key: 'Authorization', value: 'Bearer t' }, { key: 'User-Agent', value: 'mine' }],
        },
      });
      expect(server.seen[0]!.headers).toMatchObject({ 'content-type': 'application/vnd.api+json', authorization: 'Bearer t', 'user-agent': 'mine' });
    });

    it('fills {{KEY}} placeholders in url, headers, query, body, basic auth and assertion targets', async () => {
      const server = await serve((req, res) => res.end(`hello ${String(req.headers['x-name'])}`));
      const result = await run({
        request: {
          method: 'POST',
          url: `http://{{HOST}}:${server.port}/{{PATH}}`,
          headers: [{ key: 'X-Name', value: '{{NAME}}' }],
          queryParameters: [{ key: 'q', value: '{{ NAME }}' }, { key: 'keep', value: '{{MISSING}}' }],
          body: 'name={{NAME}}',
          bodyType: 'RAW',
          basicAuth: { username: '{{USER}}', password: 'x' },
          assertions: [assertion('TEXT_BODY', 'EQUALS', 'hello {{NAME}}')],
        },
        job: { environment: { HOST: '127.0.0.1', PATH: 'greet', NAME: 'vigil', USER: 'bot' } },
      });
      expect(result.errorMessage).toBeNull();
      expect(server.seen[0]).toMatchObject({ url: '/greet?q=vigil&keep=%7B%7BMISSING%7D%7D', body: 'name=vigil', headers: { authorization: `Basic ${Buffer.from('bot:x').toString('base64')}` } });
    });

    it('a url that is still relative, or not http(s) once filled, fails before sending anything', async () => {
      expect(await run({ request: { url: '/health' } })).toMatchObject({
        hasFailures: true, failureKind: 'OTHER', errorMessage: 'The url "/health" is relative, and the check\'s group has no apiCheckDefaults.url to complete it',
      });
      expect((await run({ request: { url: '{{BASE}}/x' }, job: { environment: { BASE: 'ftp://files.example.com' } } })).errorMessage)
        .toBe('The url "ftp://files.example.com/x" is not an http:// or https:// URL');
      expect((await run({ request: { url: '{{BASE}}/x' } })).errorMessage).toBe('The url "{{BASE}}/x" is not a valid URL once its variables are filled in');
    });
  });

  describe('the status', () => {
    it('without a STATUS_CODE assertion an error status fails and any other passes', async () => {
      const down = await serve(json(503, { status: 'down' }));
      expect(await run({ request: { url: `${down.origin}/` } })).toMatchObject({
        hasFailures: true, failureKind: 'ASSERTION', statusCode: 503,
        errorMessage: 'The response status 503 is an error status; add a STATUS_CODE assertion if this status is expected',
      });
      const moved = await serve(json(304, {}));
      expect(await run({ request: { url: `${moved.origin}/` } })).toMatchObject({ hasFailures: false, statusCode: 304 });
    });

    it('a STATUS_CODE assertion decides alone: 404 can be the expected answer', async () => {
      const gone = await serve(json(404, { error: 'not found' }));
      const expected = await run({ request: { url: `${gone.origin}/`, assertions: [assertion('STATUS_CODE', 'EQUALS', '404')] } });
      expect(expected).toMatchObject({ hasFailures: false, errorMessage: null, statusCode: 404 });
      expect(expected.assertions).toEqual([{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '404', actual: 404, passed: true }]);
      const wrong = await run({ request: { url: `${gone.origin}/`, assertions: [assertion('STATUS_CODE', 'LESS_THAN', '400')] } });
      expect(wrong).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION', errorMessage: 'Assertion STATUS_CODE LESS_THAN 400 failed: the status code was 404' });
    });

    it('shouldFail: only an error status passes; a network failure still fails', async () => {
      const gone = await serve(json(404, {}));
      const fine = await serve(json(200, {}));
      expect(await run({ request: { url: `${gone.origin}/` }, check: { shouldFail: true } })).toMatchObject({ hasFailures: false, errorMessage: null });
      expect(await run({ request: { url: `${fine.origin}/` }, check: { shouldFail: true } })).toMatchObject({
        hasFailures: true, failureKind: 'ASSERTION', errorMessage: 'The response status 200 is not an error status, and the check has shouldFail set',
      });
      expect(await run({ request: { url: `http://127.0.0.1:${await closedPort()}/` }, check: { shouldFail: true } })).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
    });
  });

  describe('assertions on a real response', () => {
    const body = { status: 'ok', items: [{ id: 1, name: 'book' }, { id: 2, name: 'pen' }], count: 2, note: null };
    const api = () => serve(json(200, body, { 'x-version': '2.1', 'cache-control': 'no-store' }));

    it('status, text body, JSON paths, headers and response time pass together, each recorded', async () => {
      const server = await api();
      const result = await run({
        request: {
          url: `${server.origin}/orders`,
          assertions: [
            assertion('STATUS_CODE', 'EQUALS', '200'),
            assertion('TEXT_BODY', 'CONTAINS', '"name":"pen"'),
            assertion('TEXT_BODY', 'EQUALS', 'ok', { regex: '"status":"(\\w+)"' }),
            assertion('JSON_BODY', 'EQUALS', 'ok', { property: '$.status' }),
            assertion('JSON_BODY', 'EQUALS', 'pen', { property: '$.items[1].name' }),
            assertion('JSON_BODY', 'GREATER_THAN', '1', { property: 'count' }),
            assertion('JSON_BODY', 'HAS_KEY', 'name', { property: '$.items[0]' }),
            assertion('JSON_BODY', 'IS_NULL', '', { property: '$.note' }),
            assertion('HEADERS', 'CONTAINS', 'json', { property: 'Content-Type' }),
            assertion('HEADERS', 'EQUALS', '2.1', { property: 'x-version' }),
            assertion('HEADERS', 'HAS_KEY', 'Cache-Control'),
            assertion('RESPONSE_TIME', 'LESS_THAN', '5000'),
          ],
        },
      });
      expect(result.errorMessage).toBeNull();
      expect(result.assertions?.every((a) => a.passed)).toBe(true);
      expect(result.assertions?.map((a) => a.actual)).toEqual([
        200, JSON.stringify(body), 'ok', 'ok', 'pen', 2, JSON.stringify(body.items[0]), null, 'application/json; charset=utf-8', '2.1',
        expect.stringContaining('"cache-control":"no-store"'), result.responseTime,
      ]);
    });

    it('each failing assertion fails the run with a message naming it and what was seen', async () => {
      const server = await api();
      const result = await run({
        request: {
          url: `${server.origin}/orders`,
          assertions: [
            assertion('TEXT_BODY', 'NOT_CONTAINS', 'book'),
            assertion('JSON_BODY', 'EQUALS', 'down', { property: '$.status' }),
            assertion('JSON_BODY', 'NOT_EMPTY', '', { property: '$.missing' }),
            assertion('HEADERS', 'EQUALS', 'gzip', { property: 'content-encoding' }),
            assertion('RESPONSE_TIME', 'LESS_THAN', '0'),
          ],
        },
      });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION', statusCode: 200 });
      expect(result.errorMessage!.split('; ')).toEqual([
        `Assertion TEXT_BODY NOT_CONTAINS "book" failed: the body was ${JSON.stringify(JSON.stringify(body))}`,
        'Assertion JSON_BODY property "$.status" EQUALS "down" failed: the value was "ok"',
        'Assertion JSON_BODY property "$.missing" NOT_EMPTY failed: property "$.missing" is not in the body',
        'Assertion HEADERS header "content-encoding" EQUALS "gzip" failed: the response has no content-encoding header',
        `Assertion RESPONSE_TIME LESS_THAN 0 failed: the response took ${result.responseTime} ms`,
      ]);
      expect(result.assertions?.map((a) => a.passed)).toEqual([false, false, false, false, false]);
    });

    it('a JSON_BODY assertion on a body that is not JSON fails and says so', async () => {
      const server = await serve((_req, res) => res.end('<html>oops</html>'));
      const result = await run({ request: { url: `${server.origin}/`, assertions: [assertion('JSON_BODY', 'EQUALS', 'ok', { property: 'status' })] } });
      expect(result.errorMessage).toBe('Assertion JSON_BODY property "status" EQUALS "ok" failed: the body is not JSON');
    });
  });

  describe('secrets', () => {
    it('are sent but never recorded: not in the url, headers, body excerpt, assertions or message', async () => {
      const server = await serve((req, res) => res.end(`you sent ${String(req.headers['x-api-key'])} for ${req.url}`));
      const secret = 'pa55-w0rd-xyz';
      const result = await run({
        request: {
          url: `${server.origin}/?key={{SERVICE_SECRET_KEY}}`,
          headers: [{ key: 'X-Api-Key', value: '{{SERVICE_SECRET_KEY}}' }],
          assertions: [assertion('TEXT_BODY', 'EQUALS', 'nothing')],
        },
        job: { environment: { SERVICE_SECRET_KEY: secret }, secrets: [secret] },
      });
      expect(server.seen[0]!.headers['x-api-key']).toBe(secret);
      expect(result.errorMessage).toBe('Assertion TEXT_BODY EQUALS "nothing" failed: the body was "you sent ******** for /?key=********"');
      expect(JSON.stringify(result)).not.toContain(secret);
    });

    it('cookies are masked where the result records them: the Cookie sent and the Set-Cookie the target answered', async () => {
      const server = await serve((req, res) => {
        res.writeHead(200, { 'set-cookie': ['sid=session-from-target-7; Path=/; HttpOnly', 'lang=en; Path=/'], 'x-kept': 'yes' });
        res.end(`welcome back, sid=session-from-target-7`);
      });
      const result = await run({ request: { url: `${server.origin}/`, headers: [{ key: 'Cookie', value: 'consent=yes' }, { key: 'X-Kept', value: 'yes' }] } });
      expect(server.seen[0]!.headers.cookie).toBe('consent=yes');
      expect(result.details).toMatchObject({
        request: { headers: { Cookie: '********', 'X-Kept': 'yes' } },
        response: { headers: { 'set-cookie': ['********', '********'], 'x-kept': 'yes' }, body: 'welcome back, ********' },
      });
      expect(JSON.stringify(result)).not.toContain('session-from-target-7');
    });
  });

  describe('wiring', () => {
    it('registerHttpRunner puts the runner on RUNNERS of the host\'s container', async () => {
      let registered: ReturnType<typeof registerHttpRunner> | undefined;
      const vigil = createVigil({ storage: memoryStorage(), secretKey: 'ab'.repeat(32) }, (container) => {
        registered = registerHttpRunner(container, { maxResponseBytes: 4096 });
      });
      try {
        expect(resolveAll(vigil.container, RUNNERS).find((r) => r.checkType === 'API')).toBe(registered);
        expect(resolveAll(vigil.container, RUNNERS).map((r) => r.checkType)).toEqual(['API', 'URL', 'MULTI_STEP']);
        expect(registered?.options.maxResponseBytes).toBe(4096);
      } finally {
        await vigil.close();
      }
    });

    it('rejects options that make no sense', () => {
      expect(() => httpRunner({ maxResponseBytes: 0 })).toThrow('maxResponseBytes must be a positive number');
      expect(() => httpRunner({ maxRedirects: -1 })).toThrow('maxRedirects must be a positive number');
      expect(httpRunner({ maxRedirects: 0 }).options.maxRedirects).toBe(0);
    });

    it('answers a check of another type with an error, not a throw', async () => {
      const job = apiJob({ request: { url: 'http://127.0.0.1:1/' } });
      const result = await runner.run({ ...job, check: { ...job.check, checkType: 'TCP' } as never }, new AbortController().signal);
      expect(result).toMatchObject({ hasErrors: true, failureKind: 'OTHER', errorMessage: 'The HTTP runner cannot run a TCP check' });
    });
  });
});
