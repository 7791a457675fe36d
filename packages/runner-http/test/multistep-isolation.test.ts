import { readdirSync, readFileSync } from 'node:fs';
import { PUBLIC_ONLY_TARGET_POLICY } from '@vigil/core';
import { afterEach, describe, expect, it } from 'vitest';
import { multiStepRunner } from '../src/index.js';
import { loginApi, multiStepJob, stepsOf, TOKEN } from './multistep-support.js';
import { json, localServers } from './support.js';

/** The multi-step script processes this test process has running now (Linux's /proc). */
function scriptProcesses(): number[] {
  if (process.platform !== 'linux') return [];
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || Number(ppid) !== process.pid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('multistep-worker')) out.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

describe('multi-step scripts: secrets and isolation', () => {
  const serve = localServers();
  const runner = multiStepRunner();
  const run = (job: ReturnType<typeof multiStepJob>, r = runner) => r.run(job, new AbortController().signal);
  const HOST_VARIABLE = 'VIGIL_TEST_MULTISTEP_HOST_SECRET';
  afterEach(() => {
    delete process.env[HOST_VARIABLE];
    expect(scriptProcesses()).toEqual([]);
  });

  it('scrubs the job\'s secrets and the credentials the script sent from the URLs, messages, assertions and logs', async () => {
    const api = await serve((req, res) => json(200, { echo: req.headers, url: req.url })(req, res, ''));
    const secret = 'api-key-7c1d9e2f';
    const basicPassword = 'b4sic-pa55word';
    const proxy = 'proxy-cred-123456';
    const result = await run(multiStepJob(`
      await step('Echo', async () => {
        const base = '${api.origin}'.replace('http://', 'http://ada:${basicPassword}@');
        const res = await request.get(base + '/echo', {
          params: { key: process.env.API_KEY },
          headers: { authorization: 'Bearer ${TOKEN}', 'Proxy-Authorization': '${proxy}' },
        });
        console.log('echo', await res.text());
        expect.soft((await res.json()).echo.authorization).toBe('nothing');
        expect(process.env.API_KEY).toBe('wrong');
      });
    `, {}, { environment: { API_KEY: secret }, secrets: [secret] }));
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    // Sent as written (the URL's credentials as Basic auth, the script's own Authorization kept).
    expect(api.seen[0]!.url).toBe(`/echo?key=${secret}`);
    expect(api.seen[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const recorded = JSON.stringify(result);
    for (const value of [secret, TOKEN, proxy, basicPassword]) expect(recorded).not.toContain(value);
    expect(recorded).toContain('********');
    expect(stepsOf(result.details)[0]!.requests[0]!.url).toBe(`${api.origin}/echo?key=********`);
    // The hard failure that ended the script is the run's message; the soft one is in the step's assertions.
    expect(result.errorMessage).toBe('Step "Echo": expect(received).toBe(expected) … Expected: "wrong" Received: "********" (line 10)');
    expect(stepsOf(result.details)[0]!.assertions[0]!.message).toMatch(/Expected: "nothing"\nReceived: "\*\*\*\*\*\*\*\*"$/);
    expect((result.details!.logs as { text: string }[])[0]!.text).toMatch(/^echo \{.*"authorization":"\*\*\*\*\*\*\*\*".*"proxy-authorization":"\*\*\*\*\*\*\*\*".*"url":"\/echo\?key=\*\*\*\*\*\*\*\*"\}$/);
  });

  it("sees none of the host's environment, reads no file outside its folder, starts no process and requires only Node's own modules", async () => {
    process.env[HOST_VARIABLE] = 'host-only-value';
    const result = await run(multiStepJob(`
      const fs = require('node:fs');
      const outcome = (fn) => { try { fn(); return 'allowed'; } catch (err) { return err.code || err.message; } };
      console.log(JSON.stringify({
        host: String(process.env.${HOST_VARIABLE}),
        keys: Object.keys(process.env),
        read: outcome(() => fs.readFileSync('/etc/hostname')),
        write: outcome(() => fs.writeFileSync('/tmp/vigil-multistep-escape.txt', 'x')),
        own: outcome(() => { fs.writeFileSync('note.txt', 'x'); fs.readFileSync('note.txt'); }),
        child: outcome(() => require('child_process')),
        builtin: outcome(() => process.getBuiltinModule('node:worker_threads')),
        pkg: outcome(() => require('expect')),
        kill: typeof process.kill,
      }));
    `, {}, { environment: { ONLY_THIS: '1' } }));
    expect(result).toMatchObject({ hasFailures: false, errorMessage: null });
    const seen = JSON.parse((result.details!.logs as { text: string }[])[0]!.text) as Record<string, unknown>;
    expect(seen).toEqual({
      host: 'undefined',
      keys: ['ONLY_THIS'],
      read: 'ERR_ACCESS_DENIED',
      write: 'ERR_ACCESS_DENIED',
      own: 'allowed',
      child: "require('child_process') is not available to multi-step scripts",
      builtin: "require('node:worker_threads') is not available to multi-step scripts",
      pkg: "require('expect') is not available to multi-step scripts: they may require Node's own modules (node:crypto, node:assert, ...) only",
      kill: 'undefined',
    });
  });

  it('process.exit fails the run cleanly, naming the step', async () => {
    const result = await run(multiStepJob("await step('Leave', async () => {\n  process.exit(3);\n});"));
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER' });
    expect(result.errorMessage).toBe('Step "Leave": A multi-step script may not end its process (process.exit(3) was called) (line 2)');
  });

  it("an endless loop is killed at the run's time limit, the step it was in failed and the next not run", async () => {
    const started = Date.now();
    const result = await run(multiStepJob("await step('Spin', async () => { while (true) {} });\nawait step('After', async () => {});", {}, { timeoutMs: 3_000 }));
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'TIMEOUT' });
    expect(result.errorMessage).toBe('The script did not finish within the run\'s time limit of 3000 ms and was stopped (in step "Spin")');
    expect(stepsOf(result.details).map((s) => [s.name, s.status])).toEqual([['Spin', 'failed'], ['After', 'not run']]);
    // The step ran until the process was stopped: its time counts (how much depends on how long the worker took to start).
    expect(stepsOf(result.details)[0]!.durationMs).toBeGreaterThan(0);
    expect(result.responseTime).toBe(stepsOf(result.details)[0]!.durationMs);
  });

  it('a script that exhausts its memory fails its run', async () => {
    const result = await run(
      multiStepJob("await step('Hoard', async () => { const keep = []; for (;;) keep.push(new Array(100_000).fill(keep.length)); });"),
      multiStepRunner({ scriptMemoryLimitMb: 32 }),
    );
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toBe('The script ran out of memory (its limit is 32 MB) (in step "Hoard")');
  });

  it('an abort ends the run promptly, and leaves no process behind', async () => {
    const silent = await serve(() => undefined);
    const controller = new AbortController();
    const pending = runner.run(multiStepJob(`await step('Wait', () => request.get('${silent.origin}/', { timeout: 0 }));`, {}, { timeoutMs: 30_000 }), controller.signal);
    // Once the request has arrived, the script waits in its step for an answer that never comes.
    while (silent.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(scriptProcesses()).toHaveLength(1);
    const aborted = Date.now();
    controller.abort();
    const result = await pending;
    expect(Date.now() - aborted).toBeLessThan(2_000);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', errorMessage: 'The run was stopped before the script finished (in step "Wait")' });
    expect(scriptProcesses()).toEqual([]);
  });

  it('under a target policy that refuses internal addresses, a request to 127.0.0.1 is refused and the run fails, even when the script catches it', async () => {
    const api = await serve(loginApi);
    const result = await run(multiStepJob(`
      await step('Try', async () => {
        try { await request.get('${api.origin}/orders'); } catch (err) { console.log('caught', err.code); }
      });
    `, {}, { targetPolicy: PUBLIC_ONLY_TARGET_POLICY }));
    expect(api.seen).toHaveLength(0);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER', details: { errorCode: 'ETARGETPOLICY' } });
    expect(result.errorMessage).toMatch(/^The target policy refused .*127\.0\.0\.1.* \(in step "Try"\)$/);
    expect(result.details!.refusedTargets).toEqual([expect.objectContaining({ host: '127.0.0.1', address: '127.0.0.1', label: 'step "Try"' })]);
    expect((result.details!.logs as { text: string }[]).map((l) => l.text)).toEqual(['caught ETARGETPOLICY']);
  });
});
