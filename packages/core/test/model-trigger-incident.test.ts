import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { createVigil } from '../src/container.js';
import { ValidationError } from '../src/errors.js';
import { BUILTIN_CHECK_TYPES, CheckCreateSchemas, CheckUpdateSchemas } from '../src/model/check.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { accepts, issuesOf } from './assertions.js';
import { refused } from './refused.js';

const trigger = (serviceId: string) => ({ triggerIncident: { serviceId, name: 'Down', description: 'Looking into it.' } });
const tcp = { name: 'db', request: { hostname: 'db.example.com', port: 5432 } };
const BODIES: Record<(typeof BUILTIN_CHECK_TYPES)[number], Record<string, unknown>> = {
  TCP: tcp,
  API: { name: 'api', request: { url: 'https://api.example.com/' } },
  BROWSER: { name: 'home', script: "await page.goto('https://example.com')" },
  HEARTBEAT: { name: 'backup', heartbeat: { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'hours' } },
  DNS: { name: 'resolver', request: { query: 'shop.example.com' } },
  URL: { name: 'home', request: { url: 'https://shop.example.com/' } },
  ICMP: { name: 'router', request: { hostname: '192.0.2.1' } },
  MULTI_STEP: { name: 'login flow', script: "await step('home', () => request.get('https://example.com/'))" },
  PLAYWRIGHT: { name: 'shop suite', files: { 'tests/home.spec.ts': "import { test } from '@playwright/test';\ntest('home', async () => {});" } },
};

describe('triggerIncident.serviceId is at most 255 characters, as the other ids a body names', () => {
  it.each(BUILTIN_CHECK_TYPES)('%s: 255 characters accepted, 256 refused naming the field, on create and update', (type) => {
    for (const schema of [CheckCreateSchemas[type], CheckUpdateSchemas[type]]) {
      expect(accepts(schema, { ...BODIES[type], ...trigger('s'.repeat(255)) })).toBe(true);
      expect(issuesOf(schema, { ...BODIES[type], ...trigger('s'.repeat(256)) })).toEqual([
        { path: 'triggerIncident.serviceId', message: 'must be at most 255 characters' },
      ]);
    }
  });

  it('a 900,000-character id is a 400 naming the field, on create and update, without looking it up', async () => {
    const storage = memoryStorage();
    const looked: string[] = [];
    const listByIds = storage.services.listByIds.bind(storage.services);
    storage.services.listByIds = async (accountId, ids) => {
      looked.push(...ids);
      return listByIds(accountId, ids);
    };
    const vigil = createVigil({ storage, secretKey: 'c'.repeat(64) });
    const account = (await vigil.accounts.ensure()).id;
    const service = await vigil.services.create(account, { name: 'API' });
    const huge = 's'.repeat(900_000);

    await refused(vigil.checks.create(account, 'TCP', { ...tcp, ...trigger(huge) }), 'triggerIncident.serviceId');
    const check = await vigil.checks.create(account, 'TCP', { ...tcp, ...trigger(service.id) });
    expect(looked).toEqual([service.id]);
    const err = await vigil.checks.update(account, check.id, trigger(huge)).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues).toEqual([{ path: 'triggerIncident.serviceId', message: 'must be at most 255 characters' }]);
    expect(looked).toEqual([service.id]);
    expect((await vigil.checks.get(account, check.id)).triggerIncident?.serviceId).toBe(service.id);
  });
});
