import { describe, expect, it } from 'vitest';
import { MultiStepCheckCreateSchema, MultiStepCheckUpdateSchema } from '../src/model/check-multistep.js';
import { parse } from '../src/model/parse.js';
import { createVigil } from '../src/container.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { issuesOf } from './assertions.js';
import { ACCOUNT_A } from './helpers.js';

const issue = (input: unknown) => issuesOf(MultiStepCheckCreateSchema, input).map((i) => `${i.path}: ${i.message}`);
const SCRIPT = "await step('home', async () => {\n  expect((await request.get('https://shop.example.com/')).status()).toBe(200);\n});";

describe('multi-step check', () => {
  it('fills its defaults: no path, no variables, degraded past 10 s and failed past 30 s', () => {
    expect(parse(MultiStepCheckCreateSchema, { name: 'login flow', script: SCRIPT })).toMatchObject({
      script: SCRIPT, scriptPath: null, environmentVariables: [], degradedResponseTime: 10_000, maxResponseTime: 30_000, frequency: 10,
    });
  });

  it.each([
    [{ name: 'x' }, 'script: is required'],
    [{ name: 'x', script: '   ' }, 'script: must not be empty'],
    [{ name: 'x', script: SCRIPT, scriptPath: '../outside.js' }, 'scriptPath: must be a relative path without .. segments'],
    [{ name: 'x', script: SCRIPT, scriptPath: '/etc/passwd' }, 'scriptPath: must be a relative path without .. segments'],
    [{ name: 'x', script: SCRIPT, maxResponseTime: 60_001 }, 'maxResponseTime: must be between 0 and 60000'],
    [{ name: 'x', script: SCRIPT, frequency: 0 }, 'frequency: must be one of 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440'],
    [{ name: 'x', script: SCRIPT, environmentVariables: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }, 'environmentVariables.1.key: is a duplicate key: A'],
  ])('refuses %j naming the field', (input, expected) => {
    expect(issue(input)).toEqual([expected]);
  });

  it('keeps secret variables sealed at rest, masked in answers and open for a run', async () => {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: '4c'.repeat(32) });
    try {
      await vigil.accounts.ensure(ACCOUNT_A);
      const made = await vigil.checks.create(ACCOUNT_A, 'MULTI_STEP', {
        name: 'login flow', script: SCRIPT,
        environmentVariables: [{ key: 'USER', value: 'ops' }, { key: 'PASSWORD', value: 'hunter2-secret', secret: true }],
      });
      expect(made.checkType).toBe('MULTI_STEP');
      expect((made as { environmentVariables: unknown }).environmentVariables).toEqual([
        { key: 'USER', value: 'ops', locked: false, secret: false },
        { key: 'PASSWORD', value: '********', locked: false, secret: true },
      ]);
      const stored = await vigil.storage.checks.get(ACCOUNT_A, made.id);
      expect(JSON.stringify(stored)).not.toContain('hunter2-secret');
      // A change that leaves the variables out keeps them; the secret is still there for the run.
      await vigil.checks.update(ACCOUNT_A, made.id, { name: 'login' }, { checkType: 'MULTI_STEP' });
      const run = await vigil.checks.getForRun(ACCOUNT_A, made.id);
      expect(run.environment).toEqual({ USER: 'ops', PASSWORD: 'hunter2-secret' });
      expect(run.secrets).toEqual(['hunter2-secret']);
      expect(issuesOf(MultiStepCheckUpdateSchema, { script: '' }).map((i) => i.path)).toEqual(['script']);
    } finally {
      await vigil.close();
    }
  });
});
