import { createVigil, type Vigil } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { httpRunner } from '../src/index.js';
import { json, localServers, startHttp } from './support.js';

const serve = localServers();
const vigils: Vigil[] = [];
afterEach(async () => {
  for (const v of vigils.splice(0)) await v.close();
});

/** Runs an API check once through the engine (a check session) and answers its stored attempts, oldest first. */
async function runThroughEngine(request: { url: string }) {
  const vigil = createVigil({ storage: memoryStorage(), secretKey: 'ab'.repeat(32), runners: [httpRunner()], engine: { pollMs: 20 } });
  vigils.push(vigil);
  const accountId = (await vigil.accounts.ensure()).id;
  const check = await vigil.checks.create(accountId, 'API', {
    name: 'orders API',
    request,
    frequency: 1440,
    retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 2, maxDurationSeconds: 60, onlyOn: ['NETWORK_ERROR'] },
  });
  await vigil.start();
  const [session] = (await vigil.checkSessions.trigger(accountId, { target: { checkId: [check.id] } })).sessions;
  const done = await vigil.checkSessions.completion(accountId, session!.checkSessionId, { maxWaitSeconds: '20' });
  expect(done.done).toBe(true);
  const results = (await vigil.checkResults.list(accountId, check.id, { limit: 10 })).items;
  return results.sort((x, y) => x.attempts - y.attempts);
}

describe('retries through the engine', () => {
  it('with onlyOn NETWORK_ERROR, a refused connection is tried again up to maxRetries', async () => {
    const closed = await startHttp(json(200, {}));
    await closed.close();
    const attempts = await runThroughEngine({ url: `${closed.origin}/health` });
    expect(attempts.map((r) => [r.attempts, r.resultType, r.hasFailures])).toEqual([[1, 'ATTEMPT', true], [2, 'ATTEMPT', true], [3, 'FINAL', true]]);
    expect(attempts[2]!.errorMessage).toContain('Connection refused');
  }, 30_000);

  it('with onlyOn NETWORK_ERROR, an answer that fails its assertions is not tried again', async () => {
    const server = await serve(json(500, { status: 'down' }));
    const attempts = await runThroughEngine({ url: `${server.origin}/health` });
    expect(attempts.map((r) => [r.attempts, r.resultType, r.statusCode])).toEqual([[1, 'FINAL', 500]]);
    expect(server.seen).toHaveLength(1);
  }, 30_000);
});
