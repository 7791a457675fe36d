import { RUNNERS, type Runner } from '@vigil/core';
import { runnerSuite } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { MULTI_STEP_CHECK_TYPE, multiStepRunner, registerHttpRunner, registerMultiStepRunner } from '../src/index.js';
import { loginApi, loginFlow, multiStepJob, stepsOf, TOKEN } from './multistep-support.js';
import { json, localServers, startHttp } from './support.js';

describe('multi-step runner conformance', () => {
  runnerSuite(it, async () => {
    const api = await startHttp(loginApi);
    const silent = await startHttp(() => undefined);
    return {
      runner: multiStepRunner(),
      passing: multiStepJob(loginFlow(api.origin)),
      failing: multiStepJob(loginFlow(api.origin, { profileStatus: 204 })),
      hanging: multiStepJob(`await step('wait', () => request.get('${silent.origin}/', { timeout: 0 }));`),
      leakingSecret: multiStepJob("throw new Error('the key was ' + process.env.API_KEY);", {}, { environment: { API_KEY: 'key-9f8e7d6c5b' }, secrets: ['key-9f8e7d6c5b'] }),
      invalidCheck: { script: "await step('broken', async () => {" },
      cleanup: async () => {
        for (const s of [api, silent]) await s.close();
      },
    };
  });
});

describe('multiStepRunner', () => {
  const serve = localServers();
  const runner = multiStepRunner();
  const run = (job: ReturnType<typeof multiStepJob>) => runner.run(job, new AbortController().signal);

  it('runs a three-step login flow, carrying the token from step to step, and scrubs it from the result', async () => {
    const api = await serve(loginApi);
    const result = await run(multiStepJob(loginFlow(api.origin), {}, { environment: { PASSWORD: 'hunter2-pw' } }));
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: false, errorMessage: null, failureKind: null });
    expect(api.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /login', 'GET /profile', 'GET /orders?page=2']);
    expect(api.seen[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(api.seen[0]!.body)).toEqual({ user: 'ada', password: 'hunter2-pw' });
    expect(api.seen[2]!.headers.authorization).toBe(`Bearer ${TOKEN}`);

    const steps = stepsOf(result.details);
    expect(steps.map((s) => [s.name, s.status])).toEqual([['Log in', 'passed'], ['Get profile', 'passed'], ['List orders', 'passed']]);
    expect(steps[1]!.requests).toEqual([expect.objectContaining({ method: 'GET', url: `${api.origin}/profile`, status: 200, statusText: 'OK', error: null })]);
    const timings = steps[1]!.requests[0]!.timings as Record<string, number>;
    expect(timings.total).toBeGreaterThan(0);
    expect(timings.total).toBeCloseTo(timings.firstByte! + timings.download!, 1);
    expect(steps[2]!.assertions).toEqual([{ matcher: 'toHaveLength', soft: false, passed: true, message: null }]);

    // The response time is the sum of the steps, and each step is a phase by position.
    const sum = steps.reduce((a, s) => a + s.durationMs, 0);
    expect(result.responseTime).toBeCloseTo(sum, 1);
    expect(result.phases).toEqual({ total: result.responseTime, step1: steps[0]!.durationMs, step2: steps[1]!.durationMs, step3: steps[2]!.durationMs });

    // The token was sent as a Bearer credential: the profile's echo of it, in the logs, is masked.
    const recorded = JSON.stringify(result);
    expect(recorded).not.toContain(TOKEN);
    expect((result.details!.logs as { text: string }[]).map((l) => l.text)).toEqual(['profile {"name":"Ada","token":"********"}']);
  });

  it('a failing hard assertion in step two fails the run naming the step, and step three is reported not run', async () => {
    const api = await serve(loginApi);
    const result = await run(multiStepJob(loginFlow(api.origin, { profileStatus: 201 })));
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'ASSERTION' });
    expect(result.errorMessage).toBe('Step "Get profile": expect(received).toBe(expected) … Expected: 201 Received: 200 (line 10)');
    const steps = stepsOf(result.details);
    expect(steps.map((s) => [s.name, s.status])).toEqual([['Log in', 'passed'], ['Get profile', 'failed'], ['List orders', 'not run']]);
    expect(steps[1]!.assertions).toEqual([expect.objectContaining({ matcher: 'toBe', soft: false, passed: false })]);
    expect(steps[1]!.error).toMatch(/Expected: 201\nReceived: 200/);
    expect(api.seen.map((r) => r.url)).toEqual(['/login', '/profile']);
    // A step not run has no phase; the response time is the steps that ran.
    expect(Object.keys(result.phases)).toEqual(['total', 'step1', 'step2']);
  });

  it('a failing soft assertion fails the run, and the later steps still run', async () => {
    const api = await serve(loginApi);
    const result = await run(multiStepJob(`
      await step('One', async () => {
        const res = await request.get('${api.origin}/profile');
        expect.soft(res.status()).toBe(200);
        expect.soft(await res.json()).toHaveProperty('error', 'no token');
      });
      await step('Two', async () => {
        const res = await request.get('${api.origin}/nowhere');
        expect.soft(res.ok()).toBe(true);
        expect(res.status()).toBeGreaterThan(399);
      });
      await step('Three', () => request.head('${api.origin}/orders'));
    `));
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    expect(result.errorMessage).toBe('Step "One": expect(received).toBe(expected) … Expected: 200 Received: 401 (and 1 more failed assertion)');
    const steps = stepsOf(result.details);
    expect(steps.map((s) => [s.name, s.status])).toEqual([['One', 'failed'], ['Two', 'failed'], ['Three', 'passed']]);
    expect(steps[0]!.assertions.map((a) => [a.matcher, a.soft, a.passed])).toEqual([['toBe', true, false], ['toHaveProperty', true, true]]);
    expect(steps[1]!.assertions.map((a) => [a.matcher, a.soft, a.passed])).toEqual([['toBe', true, false], ['toBeGreaterThan', false, true]]);
    expect(api.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /profile', 'GET /nowhere', 'HEAD /orders']);
  });

  it('markDegraded marks a passing run degraded with its reason; a failing one is only failing', async () => {
    const api = await serve(json(200, { slowQueries: 3 }));
    const script = (extra: string) => `
      await step('Stats', async () => {
        const stats = await (await request.get('${api.origin}/stats')).json();
        if (stats.slowQueries > 2) markDegraded('slow queries: ' + stats.slowQueries);
        ${extra}
      });`;
    const degraded = await run(multiStepJob(script('')));
    expect(degraded).toMatchObject({ hasFailures: false, isDegraded: true, errorMessage: null });
    expect(degraded.details).toMatchObject({ degradedReason: 'slow queries: 3' });
    const failing = await run(multiStepJob(script("expect(stats.slowQueries).toBe(0);")));
    expect(failing).toMatchObject({ hasFailures: true, isDegraded: false, failureKind: 'ASSERTION' });
  });

  it('is degraded past degradedResponseTime and fails past maxResponseTime, on the sum of its steps', async () => {
    const api = await serve((_req, res) => setTimeout(() => json(200, {})(_req, res, ''), 150));
    const script = `await step('a', () => request.get('${api.origin}/')); await step('b', () => request.get('${api.origin}/'));`;
    const slow = await run(multiStepJob(script, { degradedResponseTime: 200, maxResponseTime: 5_000 }));
    expect(slow).toMatchObject({ hasFailures: false, isDegraded: true, overMaxResponseTime: false });
    expect(slow.details!.degradedReason).toMatch(/^The steps took \d+(\.\d+)? ms, over the check's degradedResponseTime of 200 ms$/);
    const over = await run(multiStepJob(script, { degradedResponseTime: 100, maxResponseTime: 250 }));
    expect(over).toMatchObject({ hasFailures: true, isDegraded: false, overMaxResponseTime: true, failureKind: 'TIMEOUT' });
    expect(over.errorMessage).toMatch(/^The steps took \d+(\.\d+)? ms, over the check's maxResponseTime of 250 ms$/);
  });

  it('without steps, the response time is the script\'s own time, and requests and assertions are kept at the top level', async () => {
    const api = await serve((_req, res) => setTimeout(() => json(200, { ok: true })(_req, res, ''), 100));
    const result = await run(multiStepJob(`const res = await request.get('${api.origin}/health'); expect(await res.json()).toEqual({ ok: true });`));
    expect(result).toMatchObject({ hasFailures: false, phases: { total: result.responseTime } });
    expect(result.responseTime).toBeGreaterThanOrEqual(100);
    expect(result.details).toMatchObject({ steps: [], requests: [{ method: 'GET', status: 200 }], assertions: [{ matcher: 'toEqual', passed: true }] });
  });

  it('shouldFail turns the verdict round', async () => {
    const api = await serve(loginApi);
    const failing = await run(multiStepJob(loginFlow(api.origin, { profileStatus: 500 }), { shouldFail: true }));
    expect(failing).toMatchObject({ hasFailures: false, errorMessage: null });
    expect(failing.details).toMatchObject({ expectedFailure: { failureKind: 'ASSERTION' } });
    const passing = await run(multiStepJob(loginFlow(api.origin), { shouldFail: true }));
    expect(passing).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
  });

  it('a thrown error fails the run as OTHER with its line; a request that cannot connect is a NETWORK_ERROR', async () => {
    const thrown = await run(multiStepJob("await step('Check', async () => {\n  throw new TypeError('no such order');\n});\nawait step('Never', async () => {});"));
    expect(thrown).toMatchObject({ hasFailures: true, failureKind: 'OTHER', errorMessage: 'Step "Check": TypeError: no such order (line 2)' });
    expect(stepsOf(thrown.details).map((s) => s.status)).toEqual(['failed', 'not run']);

    const closed = await startHttp(json(200, {}));
    await closed.close();
    const refused = await run(multiStepJob(`await step('Ping', () => request.get('${closed.origin}/'));`));
    expect(refused).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
    expect(refused.errorMessage).toMatch(new RegExp(`^Step "Ping": GET ${closed.origin}/ failed: connect ECONNREFUSED 127\\.0\\.0\\.1:${closed.port}`));
    expect(stepsOf(refused.details)[0]!.requests[0]).toMatchObject({ status: null, error: expect.stringContaining('ECONNREFUSED') });
  });

  it('a step inside a step is refused, failing the outer step (the inner one never ran)', async () => {
    const result = await run(multiStepJob("await step('Outer', async () => {\n  await step('Inner', async () => {});\n});"));
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toBe('Step "Outer": step("Inner") was called inside step("Outer"): steps cannot be nested or run at the same time (line 2)');
    expect(stepsOf(result.details).map((s) => [s.name, s.status])).toEqual([['Outer', 'failed'], ['Inner', 'not run']]);
  });

  it('a step the script did not await, still running when the script ended, fails the run', async () => {
    const api = await serve((req, res) => setTimeout(() => json(200, {})(req, res, ''), 300));
    const result = await run(multiStepJob(`step('Forgotten', () => request.get('${api.origin}/'));`));
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toBe('Step "Forgotten": the script ended before this step did (is an `await` missing before `step(...)`?)');
    expect(stepsOf(result.details).map((s) => [s.name, s.status])).toEqual([['Forgotten', 'failed']]);
  });

  it('an error thrown out of a callback while a step runs fails that step', async () => {
    const result = await run(multiStepJob("await step('Timer', async () => {\n  setTimeout(() => { throw new RangeError('late'); }, 10);\n  await new Promise((r) => setTimeout(r, 5_000));\n});"));
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER', errorMessage: 'Step "Timer": RangeError: late (line 2)' });
    expect(stepsOf(result.details)).toEqual([expect.objectContaining({ name: 'Timer', status: 'failed', error: 'late' })]);
  });

  it('validate refuses a script that does not compile, naming the field and the line', () => {
    expect(() => runner.validate({ script: "await step('ok', async () => {\n  const x = ;\n});" })).toThrow(
      expect.objectContaining({ code: 'VALIDATION', issues: [{ path: 'script', message: expect.stringMatching(/^does not compile: Unexpected token ';' \(line 2\)$/) }] }),
    );
    expect(() => runner.validate({ script: "await step('ok', async () => { expect(1).toBe(1); });" })).not.toThrow();
  });

  it('is registered by registerHttpRunner beside the API and URL runners, and by registerMultiStepRunner', () => {
    const registered = (register: (c: { register: (token: unknown, p: { useValue: Runner }) => void }) => void) => {
      const runners: Runner[] = [];
      register({ register: (token, p) => (token === RUNNERS ? runners.push(p.useValue) : undefined) });
      return runners.map((r) => r.checkType);
    };
    expect(registered((c) => registerHttpRunner(c as never, { maxResponseBytes: 2048 }))).toEqual(['API', 'URL', MULTI_STEP_CHECK_TYPE]);
    expect(registered((c) => registerMultiStepRunner(c as never))).toEqual([MULTI_STEP_CHECK_TYPE]);
    expect(multiStepRunner().timeoutMs).toBe(60_000);
  });
});
