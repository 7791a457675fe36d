import { PUBLIC_ONLY_TARGET_POLICY } from '@vigil/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpRunner, multiStepRunner } from '../src/index.js';
import { multiStepJob, stepsOf } from './multistep-support.js';
import { scriptedJob } from './scripts-support.js';
import { json, localServers } from './support.js';

// A script can call process.send itself, with any shape, and send or throw as much as it likes:
// none of it may throw in the host, hold up its event loop or be stored unbounded.

/** A value JSON carries whose String() throws: its toString is not a function. */
const HOSTILE = '{ toString: 1, valueOf: 1 }';
/** Every message type a worker sends (and the supervisor reads), each with hostile fields. */
const HOSTILE_MESSAGES = `
  const bad = ${HOSTILE};
  for (const m of [
    { type: 'log', level: bad, text: bad }, { type: 'log', level: 'info', text: bad }, { type: 'log', level: bad, text: 'level' },
    { type: 'script', label: bad },
    { type: 'step-start', name: bad }, { type: 'request', record: { method: bad, url: bad, statusText: bad, error: bad, timings: bad } },
    { type: 'assertion', record: { matcher: bad, message: bad, passed: false } }, { type: 'step-end', error: { name: bad, message: bad, stack: bad, code: bad, label: bad }, durationMs: bad },
    { type: 'degraded', reason: bad },
    { type: 'credentials', headers: [[bad, bad], ['authorization', bad], bad], values: [bad, 'cred-ok-123456'] },
    { type: 'target-check', id: bad, host: bad, port: bad, family: bad }, { type: 'target-refused', kind: bad, what: bad },
    { type: bad }, { type: 'fatal', error: bad }, { type: 'ready' }, [bad],
  ]) process.send(m);
  console.log('still here', process.env.NEXT);
`;

describe('multi-step scripts that send what the worker never sends', () => {
  const serve = localServers();
  const runner = multiStepRunner();
  const run = (script: string, job: Parameters<typeof multiStepJob>[2] = {}, r = runner) => r.run(multiStepJob(script, {}, job), new AbortController().signal);
  const thrown: unknown[] = [];
  const onThrown = (err: unknown) => thrown.push(err);
  beforeEach(() => {
    thrown.length = 0;
    process.on('uncaughtException', onThrown);
    process.on('unhandledRejection', onThrown);
  });
  afterEach(async () => {
    // An answer still on its way in the host would throw after the run.
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.off('uncaughtException', onThrown);
    process.off('unhandledRejection', onThrown);
    expect(thrown).toEqual([]);
  });

  for (const policy of [null, PUBLIC_ONLY_TARGET_POLICY]) {
    it(`ignores a message of every type with fields String() cannot read, and the run goes on (${policy ? 'under a target policy' : 'no target policy'})`, async () => {
      const result = await run(HOSTILE_MESSAGES, { environment: { NEXT: 'yes' }, ...(policy ? { targetPolicy: policy } : {}) });
      expect((result.details!.logs as { text: string }[]).map((l) => l.text)).toContain('still here yes');
      // The hostile step and assertion count as what they are; their texts are empty.
      expect(stepsOf(result.details)[0]).toMatchObject({ name: '', status: 'failed', error: 'The step failed' });
      expect(result).toMatchObject({ hasErrors: false, hasFailures: true, errorMessage: 'Step "": The step failed' });
      expect(result.details!.degradedReason).toBe('The script marked the run as degraded');
    });
  }

  it('a forged `done` of any shape ends the run as the script\'s failure, never the host\'s', async () => {
    const forged = await run(`process.send({ type: 'done', ok: ${HOSTILE}, error: { name: ${HOSTILE}, message: ${HOSTILE}, stack: ${HOSTILE}, label: ${HOSTILE} } }); await new Promise(() => {});`);
    expect(forged).toMatchObject({ hasFailures: true, hasErrors: false, errorMessage: 'The script failed', failureKind: 'OTHER' });
    const passed = await run(`process.send({ type: 'done', ok: true, wallMs: ${HOSTILE} }); await new Promise(() => {});`);
    expect(passed).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null });
  });

  it('a setup script that reports a request and variables of any shape fails its own run, and the host goes on', async () => {
    const server = await serve(json(200, {}));
    const result = await httpRunner({ scriptTimeoutMs: 5_000 }).run(scriptedJob({
      request: { url: `${server.origin}/` },
      setup: `process.send({ type: 'log', level: ${HOSTILE}, text: ${HOSTILE} });
process.send({ type: 'done', ok: true, env: { A: ${HOSTILE} }, request: { method: ${HOSTILE}, url: ${HOSTILE}, headers: { 'x-a': ${HOSTILE} } } });
await new Promise(() => {});`,
    }), new AbortController().signal);
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, errorMessage: 'Setup left a request that cannot be sent: request.method "" is not one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS' });
    expect(server.seen).toHaveLength(0);
  });

  it('a run whose script sends a thousand long credentials records and scrubs quickly, keeping only a bounded amount of them', async () => {
    const result = await run(`
      const crypto = require('node:crypto');
      const first = 'first-credential-' + 'x'.repeat(100);
      process.send({ type: 'credentials', values: [first] });
      for (let i = 0; i < 1_200; i += 10) process.send({ type: 'credentials', values: Array.from({ length: 10 }, () => crypto.randomBytes(8_000).toString('hex')) });
      for (let i = 0; i < 200; i++) console.log('line ' + i + ' ' + first + ' ' + 'y'.repeat(1_500));
    `, { timeoutMs: 60_000 });
    const logs = (result.details!.logs as { text: string }[]).map((l) => l.text);
    expect(logs).toHaveLength(200);
    expect(logs[7]).toBe(`line 7 ******** ${'y'.repeat(1_500)}`);
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
  });

  it('a thrown message of megabytes is cut in errorMessage and in the step, after the secrets are scrubbed', async () => {
    const secret = 'long-secret-value-0123456789';
    const whole = await run(`throw new Error('x'.repeat(1_990) + process.env.S + 'x'.repeat(20_000_000));`, { environment: { S: secret }, secrets: [secret] });
    expect(whole.errorMessage!.length).toBeLessThanOrEqual(2_001);
    expect(whole.errorMessage).toBe(`${'x'.repeat(1_990)}********${'x'.repeat(2)}…`);
    const inStep = await run(`await step('A', async () => { throw new Error('y'.repeat(5_000_000)); });`);
    expect(inStep.errorMessage).toBe(`Step "A": ${'y'.repeat(1_990)}…`);
    expect(stepsOf(inStep.details)[0]!.error).toBe(`${'y'.repeat(2_000)}…`);
    expect(JSON.stringify(inStep).length).toBeLessThan(10_000);
  });

  it('a setup or teardown script\'s thrown message of megabytes is cut after the secrets are scrubbed', async () => {
    const server = await serve(json(200, {}));
    const secret = 'setup-secret-value-0123456789';
    const result = await httpRunner({ scriptTimeoutMs: 10_000 }).run(scriptedJob({
      request: { url: `${server.origin}/` },
      setup: `throw new Error('z'.repeat(1_900) + process.env.S + 'z'.repeat(10_000_000));`,
      job: { environment: { S: secret }, secrets: [secret] },
    }), new AbortController().signal);
    expect(result.errorMessage!.length).toBeLessThanOrEqual(2_001);
    expect(result.errorMessage).toBe(`Setup failed: ${'z'.repeat(1_900)}********${'z'.repeat(78)}…`);
  });

  it('cannot read or change any process\'s priority, its host\'s included (multi-step and setup scripts)', async () => {
    const result = await run(`const os = require('node:os');
for (const call of [() => os.setPriority(process.ppid, 19), () => os.setPriority(19), () => process.getBuiltinModule('node:os').getPriority(process.ppid)]) {
  try { call(); console.log('allowed'); } catch (err) { console.log(err.message); }
}`);
    expect((result.details!.logs as { text: string }[]).map((l) => l.text)).toEqual([
      "A multi-step script may not read or change a process's priority (os.setPriority() was called)",
      "A multi-step script may not read or change a process's priority (os.setPriority() was called)",
      "A multi-step script may not read or change a process's priority (os.getPriority() was called)",
    ]);
    const server = await serve(json(200, {}));
    const setup = await httpRunner({ scriptTimeoutMs: 5_000 }).run(scriptedJob({ request: { url: `${server.origin}/` }, setup: `require('node:os').setPriority(process.ppid, 19);` }), new AbortController().signal);
    expect(setup.errorMessage).toBe("Setup failed: A setup or teardown script may not read or change a process's priority (os.setPriority() was called) (the group's localSetupScript, line 1)");
  });
});
