import { afterEach, describe, expect, it } from 'vitest';
import { httpRunner, type HttpRunnerOptions } from '../src/index.js';
import { logsOf, scriptedJob, snippets, type Scripted } from './scripts-support.js';
import { apiJob, json, localServers } from './support.js';

describe('setup and teardown scripts', () => {
  const serve = localServers();
  const runner = httpRunner({ scriptTimeoutMs: 5_000 });
  const run = (job: Scripted, r = runner) => r.run(scriptedJob(job), new AbortController().signal);

  describe('setup', () => {
    it('changes a header, a query parameter, the method and the body, and the server sees the changed request', async () => {
      const server = await serve(json(200, { ok: true }));
      const result = await run({
        request: { url: `${server.origin}/orders`, queryParameters: [{ key: 'page', value: '1' }], headers: [{ key: 'X-Trace', value: 'as-written' }] },
        setup: `
          request.headers['X-Trace'] = 'from-setup';
          request.queryParameters.page = '2';
          request.queryParameters.tag = ['a', 'b'];
          request.method = 'POST';
          request.body = { item: 'book' };
          request.headers['Content-Type'] = 'application/json';
        `,
      });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, statusCode: 200 });
      const seen = server.seen[0]!;
      expect(seen).toMatchObject({ method: 'POST', url: '/orders?page=2&tag=a&tag=b', body: '{"item":"book"}' });
      expect(seen.headers['x-trace']).toBe('from-setup');
      expect(result.details).toMatchObject({ request: { method: 'POST', headers: { 'X-Trace': 'from-setup' } }, scripts: [{ phase: 'setup', passed: true }] });
    });

    it('reads the run\'s variables from process.env, and may await a request of its own (a token)', async () => {
      const server = await serve((req, res) => {
        if (req.url === '/token') return json(200, { token: `t-for-${String(req.headers['x-client'])}` })(req, res, '');
        return json(200, {})(req, res, '');
      });
      const result = await run({
        request: { url: `${server.origin}/data` },
        job: { environment: { CLIENT_ID: 'client-9', VIGIL_RUN_SOURCE: 'TEST' } },
        setup: `
          const answer = await fetch(request.url.replace('/data', '/token'), { headers: { 'X-Client': process.env.CLIENT_ID } });
          const { token } = await answer.json();
          request.headers.Authorization = 'Bearer ' + token;
          request.headers['X-Run-Source'] = process.env.VIGIL_RUN_SOURCE;
        `,
      });
      expect(result).toMatchObject({ hasFailures: false, errorMessage: null });
      const data = server.seen.find((s) => s.url === '/data')!;
      expect(data.headers.authorization).toBe('Bearer t-for-client-9');
      expect(data.headers['x-run-source']).toBe('TEST');
      // The result records the request as sent, with its credentials masked.
      expect(result.details).toMatchObject({ request: { headers: { Authorization: '********' } } });
    });

    it('that throws fails the run before any request is sent, naming the phase, the script and the line', async () => {
      const server = await serve(json(200, {}));
      const result = await run({ request: { url: `${server.origin}/` }, setup: 'const token = null;\nif (!token) throw new Error("no token to sign in with");' });
      expect(server.seen).toHaveLength(0);
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER', statusCode: null, responseTime: 0 });
      expect(result.errorMessage).toBe("Setup failed: no token to sign in with (the group's localSetupScript, line 2)");
      expect(result.details).toMatchObject({ requestSent: false, scripts: [{ phase: 'setup', passed: false }] });
    });

    it('that fails a node:assert assertion fails with ASSERTION', async () => {
      const server = await serve(json(200, {}));
      const result = await run({ request: { url: `${server.origin}/` }, setup: "assert.ok(process.env.API_KEY, 'API_KEY must be set')" });
      expect(server.seen).toHaveLength(0);
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
      expect(result.errorMessage).toBe("Setup failed: AssertionError: API_KEY must be set (the group's localSetupScript, line 1)");
    });

    it('that leaves a request which cannot be sent fails the run, and nothing is sent', async () => {
      const server = await serve(json(200, {}));
      const result = await run({ request: { url: `${server.origin}/` }, setup: "request.url = 'ftp://example.com/'" });
      expect(server.seen).toHaveLength(0);
      expect(result.errorMessage).toBe('Setup left a request that cannot be sent: request.url "ftp://example.com/" is not an http:// or https:// URL');
    });
  });

  describe('teardown', () => {
    it('reads the status, headers, body and timings of the response', async () => {
      const server = await serve(json(201, { id: 42 }, { 'x-version': '3' }));
      const result = await run({
        request: { url: `${server.origin}/items` },
        teardown: `
          assert.equal(response.statusCode, 201);
          assert.equal(response.headers['x-version'], '3');
          assert.deepEqual(JSON.parse(response.body), { id: 42 });
          assert.ok(response.timings.total >= 0 && response.responseTime === response.timings.total);
          assert.equal(request.url, '${server.origin}/items');
          console.log('created', JSON.parse(response.body).id);
        `,
      });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, statusCode: 201 });
      expect(logsOf(result.details)).toEqual([expect.objectContaining({ phase: 'teardown', level: 'info', text: 'created 42' })]);
    });

    it('that asserts on the body fails the run with its message, after the request was made', async () => {
      const server = await serve(json(200, { status: 'degraded' }));
      const result = await run({
        request: { url: `${server.origin}/health` },
        teardown: "const body = JSON.parse(response.body);\nassert.equal(body.status, 'ok', `status was ${body.status}`);",
      });
      expect(server.seen).toHaveLength(1);
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION', statusCode: 200 });
      expect(result.errorMessage).toBe("Teardown failed: AssertionError: status was degraded (the group's localTearDownScript, line 2)");
      expect(result.details).toMatchObject({ response: { statusCode: 200 }, scripts: [{ phase: 'teardown', passed: false }] });
    });

    it('that fails a slow answer makes the run a failure, not also degraded', async () => {
      const server = await serve((req, res, body) => setTimeout(() => json(200, { ok: true })(req, res, body), 120));
      const result = await run({ request: { url: `${server.origin}/` }, check: { degradedResponseTime: 50, maxResponseTime: 5000 }, teardown: "assert.fail('not today')" });
      expect(result).toMatchObject({ hasFailures: true, isDegraded: false, failureKind: 'ASSERTION', statusCode: 200 });
      expect(result.responseTime).toBeGreaterThan(50);
    });

    it('runs after a request that got no answer (response is null), and its failure follows the run\'s own', async () => {
      const server = await serve(json(200, {}));
      await server.close();
      const result = await run({
        request: { url: `${server.origin}/` },
        teardown: "console.log('response is', response); throw new Error('cleanup found nothing')",
      });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
      expect(result.errorMessage).toMatch(/^Connection refused by .*; Teardown failed: cleanup found nothing \(the group's localTearDownScript, line 1\)$/);
      expect(logsOf(result.details).map((l) => l.text)).toEqual(['response is null']);
    });

    it('sees the variables the setup left', async () => {
      const server = await serve(json(200, {}));
      const result = await run({
        request: { url: `${server.origin}/` },
        setup: "process.env.CREATED_ID = 'order-77';",
        teardown: "console.log('deleting', process.env.CREATED_ID);",
      });
      expect(result.hasFailures).toBe(false);
      expect(logsOf(result.details).map((l) => `${l.phase}: ${l.text}`)).toEqual(['teardown: deleting order-77']);
    });
  });

  describe('snippets', () => {
    it("runs the group's setup snippet, then its local setup script, on the same request", async () => {
      const server = await serve(json(200, {}));
      const result = await run({
        request: { url: `${server.origin}/` },
        fields: { setupSnippetId: 3, tearDownSnippetId: 4 },
        setup: "request.headers['X-Order'] += ',local';",
        job: {
          snippets: snippets(
            { id: 3, name: 'Sign', script: "request.headers['X-Order'] = 'snippet'; request.headers['X-Signature'] = require('node:crypto').createHash('sha256').update('payload').digest('hex').slice(0, 8);" },
            { id: 4, name: 'Check', script: "assert.equal(response.statusCode, 500, 'expected the snippet to see 500')" },
          ),
        },
      });
      expect(server.seen[0]!.headers['x-order']).toBe('snippet,local');
      expect(server.seen[0]!.headers['x-signature']).toBe('239f59ed');
      expect(result.errorMessage).toBe('Teardown failed: AssertionError: expected the snippet to see 500 (teardown snippet 4 ("Check"), line 1)');
    });

    it("a snippet the lookup cannot find is Vigil's error, and nothing is sent", async () => {
      const server = await serve(json(200, {}));
      const result = await run({ request: { url: `${server.origin}/` }, fields: { setupSnippetId: 99 }, job: { snippets: snippets() } });
      expect(server.seen).toHaveLength(0);
      expect(result).toMatchObject({ hasErrors: true, failureKind: 'OTHER', errorMessage: "The group's setup snippet 99 was not found, so its API checks cannot run" });
    });
  });

  describe('isolation', () => {
    const HOST_VARIABLE = 'VIGIL_TEST_HOST_ONLY_SECRET';
    afterEach(() => {
      delete process.env[HOST_VARIABLE];
    });

    it("sees none of the host's environment, only the run's variables", async () => {
      process.env[HOST_VARIABLE] = 'host-only-value';
      const server = await serve(json(200, {}));
      const result = await run({
        request: { url: `${server.origin}/` },
        job: { environment: { ONLY_THIS: '1' } },
        setup: `request.headers['X-Host'] = String(process.env.${HOST_VARIABLE}); request.headers['X-Keys'] = Object.keys(process.env).join(',');`,
      });
      expect(result.hasFailures).toBe(false);
      expect(server.seen[0]!.headers['x-host']).toBe('undefined');
      expect(server.seen[0]!.headers['x-keys']).toBe('ONLY_THIS');
    });

    it('process.exit does not end anything: it fails the run, and the host goes on', async () => {
      const server = await serve(json(200, {}));
      const result = await run({ request: { url: `${server.origin}/` }, setup: 'process.exit(0);' });
      expect(server.seen).toHaveLength(0);
      expect(result.errorMessage).toBe("Setup failed: A setup or teardown script may not end its process (process.exit(0) was called) (the group's localSetupScript, line 1)");
    });

    it('a script that loops forever is killed at its time limit', async () => {
      const server = await serve(json(200, {}));
      const started = Date.now();
      const result = await run({ request: { url: `${server.origin}/` }, setup: 'while (true) {}' }, httpRunner({ scriptTimeoutMs: 1_000 }));
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(server.seen).toHaveLength(0);
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'TIMEOUT' });
      expect(result.errorMessage).toBe("Setup did not finish within its time limit of 1000 ms and was stopped (the group's localSetupScript)");
    });

    it('a script that exhausts its memory fails its run', async () => {
      const server = await serve(json(200, {}));
      const result = await run(
        { request: { url: `${server.origin}/` }, setup: 'const keep = []; for (;;) keep.push(new Array(100_000).fill(keep.length));' },
        httpRunner({ scriptMemoryLimitMb: 32, scriptTimeoutMs: 10_000 }),
      );
      expect(server.seen).toHaveLength(0);
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
      expect(result.errorMessage).toBe("Setup ran out of memory (its limit is 32 MB) (the group's localSetupScript)");
    });

    it('reads no file outside its own folder, starts no process, and requires only what it may', async () => {
      const server = await serve(json(200, {}));
      const result = await run({
        request: { url: `${server.origin}/` },
        setup: `
          const fs = require('node:fs');
          const outcome = (fn) => { try { fn(); return 'allowed'; } catch (err) { return err.code || err.message; } };
          request.headers['X-Read'] = outcome(() => fs.readFileSync('/etc/hostname'));
          request.headers['X-Write'] = outcome(() => fs.writeFileSync('/tmp/vigil-script-escape.txt', 'x'));
          request.headers['X-Own-Folder'] = outcome(() => { fs.writeFileSync('note.txt', 'x'); fs.readFileSync('note.txt'); });
          request.headers['X-Child'] = outcome(() => require('child_process'));
          request.headers['X-Builtin'] = outcome(() => process.getBuiltinModule('node:child_process'));
          request.headers['X-Package'] = outcome(() => require('undici'));
          request.headers['X-Kill'] = String(typeof process.kill);
        `,
      });
      expect(result.hasFailures).toBe(false);
      const h = server.seen[0]!.headers;
      expect(h['x-read']).toBe('ERR_ACCESS_DENIED');
      expect(h['x-write']).toBe('ERR_ACCESS_DENIED');
      expect(h['x-own-folder']).toBe('allowed');
      expect(h['x-child']).toBe("require('child_process') is not available to setup and teardown scripts");
      expect(h['x-builtin']).toBe("require('node:child_process') is not available to setup and teardown scripts");
      expect(h['x-package']).toMatch(/^require\('undici'\) is not available to setup and teardown scripts: they may require Node's own modules/);
      expect(h['x-kill']).toBe('undefined');
    });
  });

  describe('logs', () => {
    it('keep what the scripts print, with secret values scrubbed: the run\'s and those the setup made', async () => {
      const server = await serve(json(200, {}));
      const secret = 's3cr3t-api-key-value';
      const made = 'token-made-in-setup-123';
      const result = await run({
        request: { url: `${server.origin}/` },
        job: { environment: { SERVICE_SECRET_API_KEY: secret }, secrets: [secret] },
        setup: `
          console.log('using key', process.env.SERVICE_SECRET_API_KEY);
          process.stdout.write('raw ' + process.env.SERVICE_SECRET_API_KEY + '\\n');
          console.warn('careful');
          process.env.SERVICE_SECRET_TOKEN = '${made}';
          request.headers['X-Token'] = process.env.SERVICE_SECRET_TOKEN;
          console.log('made', process.env.SERVICE_SECRET_TOKEN);
        `,
        teardown: "console.error('teardown has', process.env.SERVICE_SECRET_TOKEN, encodeURIComponent(process.env.SERVICE_SECRET_API_KEY));",
      });
      expect(server.seen[0]!.headers['x-token']).toBe(made);
      expect(result.hasFailures).toBe(false);
      const lines = logsOf(result.details).map((l) => `${l.phase} ${l.source} ${l.level}: ${l.text}`);
      expect(lines).toEqual(expect.arrayContaining([
        'setup script info: using key ********',
        'setup stdout info: raw ********',
        'setup script warn: careful',
        'setup script info: made ********',
        'teardown script error: teardown has ******** ********',
      ]));
      const all = JSON.stringify(result);
      expect(all).not.toContain(secret);
      expect(all).not.toContain(made);
    });

    it('scrub a credential header the setup set, and the cookie the target set, from the logs, the body and the message', async () => {
      const server = await serve((req, res) => {
        res.writeHead(200, { 'set-cookie': 'sid=cookie-from-target-42; Path=/; HttpOnly' });
        res.end(`authorization: ${String(req.headers.authorization)}`);
      });
      const token = 'fetched-in-setup-0123456789';
      const result = await run({
        request: { url: `${server.origin}/`, assertions: [{ source: 'TEXT_BODY', comparison: 'EQUALS', target: 'nothing', property: '', regex: null }] },
        setup: `
          request.headers.Authorization = 'Bearer ' + ['fetched', 'in', 'setup', '0123456789'].join('-');
          console.log('signed in with', request.headers.Authorization);
        `,
        teardown: "console.log('the target set', response.headers['set-cookie']);",
      });
      expect(server.seen[0]!.headers.authorization).toBe(`Bearer ${token}`);
      expect(result.errorMessage).toBe('Assertion TEXT_BODY EQUALS "nothing" failed: the body was "authorization: ********"');
      expect(logsOf(result.details).map((l) => `${l.phase}: ${l.text}`)).toEqual(['setup: signed in with ********', 'teardown: the target set ********']);
      expect(result.details).toMatchObject({ request: { headers: { Authorization: '********' } }, response: { headers: { 'set-cookie': '********' } } });
      const all = JSON.stringify(result);
      expect(all).not.toContain(token);
      expect(all).not.toContain('cookie-from-target-42');
    });
  });

  it('a check without group scripts starts no process and records no script details', async () => {
    const server = await serve(json(200, {}));
    const result = await runner.run(apiJob({ request: { url: `${server.origin}/` } }), new AbortController().signal);
    expect(result.hasFailures).toBe(false);
    expect(result.details).not.toHaveProperty('scripts');
  });

  it('the engine gives an attempt the request\'s limit plus a setup\'s and a teardown\'s', () => {
    const options: HttpRunnerOptions = { defaultTimeoutMs: 20_000, scriptTimeoutMs: 5_000 };
    expect(httpRunner(options).timeoutMs).toBe(30_000);
    expect(httpRunner().timeoutMs).toBe(50_000);
    expect(httpRunner().options).toMatchObject({ scriptTimeoutMs: 10_000, scriptMemoryLimitMb: 128 });
  });
});
