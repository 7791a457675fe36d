import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { declaredSteps, multiStepRunner } from '../src/index.js';
import { multiStepJob, stepsOf } from './multistep-support.js';
import { json, localServers } from './support.js';

describe('multi-step runs: secrets at cuts, shouldFail, declared steps and redirects', () => {
  const serve = localServers();
  const runner = multiStepRunner();
  const run = (script: string, check: Parameters<typeof multiStepJob>[1] = {}, job: Parameters<typeof multiStepJob>[2] = {}) =>
    runner.run(multiStepJob(script, check, job), new AbortController().signal);

  it('scrubs a secret sent in a URL\'s path and query from the stored URL and errors, and one a cut would split, before cutting', async () => {
    const api = await serve(json(200, {}));
    const secret = "p@ss word's";
    const long = 'SECRETVALUE-0123456789';
    const result = await run(`
      await step('A', async () => {
        await request.get('${api.origin}/path/' + process.env.K + '?q=' + process.env.K);
        try { await request.get('http://127.0.0.1:1/x/' + process.env.K + '?q=' + process.env.K); } catch (err) { console.log(err.message); }
        console.log('x'.repeat(1_990) + process.env.L);
        expect.soft('y'.repeat(940) + process.env.L).toBe('z');
        markDegraded('w'.repeat(995) + process.env.L);
      });
      await step('n'.repeat(195) + process.env.L, async () => {});
      await request.get('${api.origin}/' + 'v'.repeat(1_960) + process.env.L);
    `, {}, { environment: { K: secret, L: long }, secrets: [secret, long] });
    const recorded = JSON.stringify(result);
    for (const part of ['p@ss', 'word', 'SECRETVAL', 'SECRET']) expect(recorded).not.toContain(part);
    const steps = stepsOf(result.details);
    expect(steps[0]!.requests.map((r) => r.url)).toEqual([`${api.origin}/path/********?q=********`, 'http://127.0.0.1:1/x/********?q=********']);
    const logs = (result.details!.logs as { text: string }[]).map((l) => l.text);
    expect(logs[0]).toMatch(/^GET http:\/\/127\.0\.0\.1:1\/x\/\*{8}\?q=\*{8} failed: /);
    expect(logs[1]).toBe(`${'x'.repeat(1_990)}********`);
    expect(steps[1]!.name).toBe(`${'n'.repeat(195)}*****…`);
    expect((result.details!.requests as { url: string }[])[0]!.url).toMatch(/v\*{8}$/);
    expect(result.errorMessage).toMatch(/^Step "A": expect\(received\)\.toBe\(expected\) … Expected: "z" Received: "y+\*{0,8}…$/);
  });

  it('shouldFail inverts a run failed by an assertion, soft or hard, and a passed run', async () => {
    const hard = await run("await step('Check', async () => { expect(1).toBe(2); });", { shouldFail: true });
    expect(hard).toMatchObject({ hasFailures: false, errorMessage: null, details: { expectedFailure: { failureKind: 'ASSERTION' } } });
    const soft = await run('expect.soft(1).toBe(2);', { shouldFail: true });
    expect(soft).toMatchObject({ hasFailures: false, errorMessage: null });
    const passed = await run("await step('Fine', async () => {});", { shouldFail: true });
    expect(passed).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
  });

  it('shouldFail leaves a connection failure, a timeout, an error of the script, memory and a process exit failing', async () => {
    const silent = await serve(() => undefined);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const cases: [string, string, Parameters<typeof multiStepJob>[2]?][] = [
      [`await step('Ping', () => request.get('http://127.0.0.1:${port}/'));`, 'NETWORK_ERROR'],
      [`await step('Slow', () => request.get('${silent.origin}/', { timeout: 200 }));`, 'TIMEOUT'],
      ["await step('Spin', async () => { while (true) {} });", 'TIMEOUT', { timeoutMs: 2_500 }],
      ["await step('Bug', async () => { nosuchvar.x; });", 'OTHER'],
      ["await step('Exit', async () => { process.reallyExit(3); });", 'OTHER'],
    ];
    for (const [script, kind, job] of cases) {
      const result = await run(script, { shouldFail: true }, job);
      expect({ script, ...result }).toMatchObject({ script, hasFailures: true, hasErrors: false, failureKind: kind });
      expect(result.details!.expectedFailure).toBeUndefined();
    }
    const memory = await multiStepRunner({ scriptMemoryLimitMb: 32 }).run(
      multiStepJob("await step('Hoard', async () => { const keep = []; for (;;) keep.push(new Array(100_000).fill(keep.length)); });", { shouldFail: true }),
      new AbortController().signal,
    );
    expect(memory).toMatchObject({ hasFailures: true, failureKind: 'OTHER', errorMessage: 'The script ran out of memory (its limit is 32 MB) (in step "Hoard")' });
  });

  it('declares only steps whose whole first argument is a literal, read with JavaScript\'s escapes', () => {
    expect(declaredSteps([
      "step('item ' + i, fn); step(`a${x}`, fn); step(\"x\" .concat(y), fn);",
      "step('Don\\'t', fn); step(\"tab\\there\", fn); step(`caf\\u00e9`, fn); step('\\x41\\u{1F600}', fn); step('odd \\8', fn); step( 'Last' , fn);",
    ].join('\n'))).toEqual(["Don't", 'tab\there', 'café', 'A\u{1F600}', 'Last']);
  });

  it('reports not run only the declared steps the failure kept from running: computed, escaped and long names too', async () => {
    const loop = await run("for (const i of [1, 2]) await step('item ' + i, async () => { if (i === 2) throw new Error('x'); });\nawait step('Last', async () => {});");
    expect(stepsOf(loop.details).map((s) => [s.name, s.status])).toEqual([['item 1', 'passed'], ['item 2', 'failed'], ['Last', 'not run']]);
    const escaped = await run("await step('a\\nb', async () => { throw new Error('x'); });\nawait step('Don\\'t', async () => {});");
    expect(stepsOf(escaped.details).map((s) => [s.name, s.status])).toEqual([['a\nb', 'failed'], ["Don't", 'not run']]);
    const name = 'n'.repeat(250);
    const long = await run(`await step('A', async () => {});\nawait step('${name}', async () => { throw new Error('x'); });\nawait step('B', async () => {});`);
    expect(stepsOf(long.details).map((s) => [s.name, s.status])).toEqual([['A', 'passed'], [`${'n'.repeat(200)}…`, 'failed'], ['B', 'not run']]);
  });

  it('leaves every header it scrubs as a credential (X-Api-Key, X-Auth-Token, Cookie, Authorization) out of a redirect to another origin', async () => {
    const other = await serve(json(200, {}));
    const target = other.origin.replace('127.0.0.1', 'localhost');
    const api = await serve((req, res, body) => (req.url === '/go' ? json(302, {}, { location: `${target}/there` }) : json(200, {}))(req, res, body));
    const headers = { 'X-Api-Key': 'key-secret-123', 'X-Auth-Token': 'tok-secret-456', Cookie: 'sid=cookie-secret', Authorization: 'Bearer b-secret-789', 'X-Trace': 'plain' };
    const result = await run(`await request.get('${api.origin}/go', { headers: ${JSON.stringify(headers)} });\nawait request.get('${api.origin}/same', { headers: ${JSON.stringify(headers)} });`);
    expect(result.errorMessage).toBeNull();
    const names = ['x-api-key', 'x-auth-token', 'cookie', 'authorization'];
    for (const name of names) expect(other.seen[0]!.headers[name]).toBeUndefined();
    expect(other.seen[0]!.headers['x-trace']).toBe('plain');
    // To its own origin, all of them go.
    for (const name of names) expect(api.seen[1]!.headers[name]).toBeDefined();
  });
});
