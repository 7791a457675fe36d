import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVigil } from '../src/container.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { MAX_ENVIRONMENT_VALUE_LENGTH } from '../src/model/shared.js';
import { refused } from './refused.js';

// Environment variables of checks and groups: a value has at most 10,000 characters.
// A secret value is stored sealed (longer than its plaintext): an update validates it opened.

async function setup() {
  const storage = memoryStorage();
  const vigil = createVigil({ storage, secretKey: randomBytes(32), clock: new FakeClock('2026-05-01T12:00:00.000Z') });
  const a = (await vigil.accounts.ensure()).id;
  return { vigil, storage, a };
}

type Vars = { key: string; value: string; secret?: boolean; locked?: boolean }[];

/** Checks (browser checks hold variables) and groups, made and updated the same way. */
const owners = [
  {
    name: 'a browser check',
    create: (s: Awaited<ReturnType<typeof setup>>, environmentVariables: Vars, name = 'pay') =>
      s.vigil.checks.create(s.a, 'BROWSER', { name, script: 'x()', environmentVariables }).then((c) => c.id as string | number),
    update: (s: Awaited<ReturnType<typeof setup>>, id: string | number, body: Record<string, unknown>) =>
      s.vigil.checks.update(s.a, id, body, { checkType: 'BROWSER' }),
    environment: async (s: Awaited<ReturnType<typeof setup>>, id: string | number) => (await s.vigil.checks.getForRun(s.a, id as string)).environment,
  },
  {
    name: 'a group',
    create: (s: Awaited<ReturnType<typeof setup>>, environmentVariables: Vars, name = 'pay') =>
      s.vigil.checkGroups.create(s.a, { name, environmentVariables }).then((g) => g.id as string | number),
    update: (s: Awaited<ReturnType<typeof setup>>, id: string | number, body: Record<string, unknown>) =>
      s.vigil.checkGroups.update(s.a, id, { name: 'pay', ...body }),
    /** What a member check runs with: the group's variables opened. */
    environment: async (s: Awaited<ReturnType<typeof setup>>, id: string | number) => {
      const member = await s.vigil.checks.create(s.a, 'BROWSER', { name: 'member', script: 'x()', groupId: id as number });
      return (await s.vigil.checks.getForRun(s.a, member.id)).environment;
    },
  },
];

const at = (n: number, c = 'v') => c.repeat(n);

describe.each(owners)('environment variables of %s', (owner) => {
  it('a value of 10,000 characters is accepted and one of 10,001 refused naming the field, on create and update', async () => {
    const s = await setup();
    expect(MAX_ENVIRONMENT_VALUE_LENGTH).toBe(10_000);
    const id = await owner.create(s, [{ key: 'LONG', value: at(10_000) }]);
    await refused(owner.create(s, [{ key: 'OK', value: 'x' }, { key: 'LONG', value: at(10_001) }], 'other'), 'environmentVariables.1.value');

    await owner.update(s, id, { environmentVariables: [{ key: 'LONG', value: at(10_000, 'w') }] });
    await refused(owner.update(s, id, { environmentVariables: [{ key: 'LONG', value: at(10_001) }] }), 'environmentVariables.0.value');
    expect((await owner.environment(s, id)).LONG).toBe(at(10_000, 'w'));
  });

  it('a secret value of 10,000 characters, stored sealed, survives a later unrelated update and a masked write-back', async () => {
    const s = await setup();
    const secret = at(10_000, 's');
    const id = await owner.create(s, [{ key: 'TOKEN', value: secret, secret: true, locked: true }, { key: 'SERVICE_SECRET_KEY', value: secret }]);
    await owner.update(s, id, { tags: ['later'] });
    await owner.update(s, id, { environmentVariables: [{ key: 'TOKEN', value: '********', secret: true, locked: true }, { key: 'SERVICE_SECRET_KEY', value: '********' }] });
    await owner.update(s, id, { tags: ['again'] });
    expect(await owner.environment(s, id)).toMatchObject({ TOKEN: secret, SERVICE_SECRET_KEY: secret });
  });
});
