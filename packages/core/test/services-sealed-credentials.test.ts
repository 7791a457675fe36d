import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVigil } from '../src/container.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { MASKED } from '../src/services/masking.js';
import { maskUrl } from '../src/services/sealing.js';
import { isCredentialHeader } from '../src/runner-kit/credential-headers.js';
import type { CheckResponse } from '../src/model/check.js';
import { AlertChannel, ApiCheck } from '../src/constructs/index.js';

/** The request of an API check's response. */
const requestOf = (check: CheckResponse) => (check as Extract<CheckResponse, { checkType: 'API' }>).request;

async function setup() {
  const storage = memoryStorage();
  const vigil = createVigil({ storage, secretKey: randomBytes(32), clock: new FakeClock('2026-05-01T12:00:00.000Z') });
  const a = (await vigil.accounts.ensure()).id;
  const stored = async (table: Parameters<typeof storage.raw.dump>[0]) => JSON.stringify(await storage.raw.dump(table));
  return { vigil, storage, a, stored };
}

const hook = {
  name: 'ops', url: 'https://hooks.example.com/in',
  headers: [
    { key: 'Authorization', value: 'Bearer unlocked-auth-value' },
    { key: 'X-Api-Token', value: 'token-header-value' },
    { key: 'X-Locked', value: 'locked-header-value', locked: true },
    { key: 'X-Team', value: 'team-header-value' },
  ],
};

const apiRequest = {
  url: 'https://api.example.com/health',
  headers: [{ key: 'Authorization', value: 'Bearer api-auth-value' }, { key: 'Cookie', value: 'sid=api-cookie-value' }, { key: 'X-Plain', value: 'api-plain-value' }],
  basicAuth: { username: 'svc', password: 'api-basic-password' },
};

describe('sealed credentials', () => {
  it('names a header a credential by its name', () => {
    for (const name of ['Authorization', 'proxy-authorization', 'COOKIE', 'X-Api-Key', 'x-auth-token', 'Client-Secret']) expect(isCredentialHeader(name), name).toBe(true);
    for (const name of ['X-Team', 'Accept', 'Content-Type']) expect(isCredentialHeader(name), name).toBe(false);
    expect(maskUrl('https://hooks.slack.com/services/T0/B0/xyz?x=1')).toBe(`https://hooks.slack.com/${MASKED}`);
    expect(maskUrl('not a url')).toBe(MASKED);
  });

  it('a webhook seals every header value; a response masks locked and credential-named ones, here and in the alertChannels of its checks', async () => {
    const { vigil, a, stored } = await setup();
    const channel = await vigil.alertChannels.create(a, { type: 'WEBHOOK', config: hook });
    expect(await stored('alert_channels')).toContain('X-Team');
    for (const h of hook.headers) expect(await stored('alert_channels')).not.toContain(h.value);
    const shown = [
      { key: 'Authorization', value: MASKED, locked: false },
      { key: 'X-Api-Token', value: MASKED, locked: false },
      { key: 'X-Locked', value: MASKED, locked: true },
      { key: 'X-Team', value: 'team-header-value', locked: false },
    ];
    expect(channel.config).toMatchObject({ headers: shown });
    const check = await vigil.checks.create(a, 'TCP', { name: 'db', request: { hostname: 'db.example.com', port: 5432 } });
    expect(check.alertChannels.webhook[0]!.headers).toEqual(shown);
    expect((await vigil.checks.get(a, check.id)).alertChannels.webhook[0]!.headers).toEqual(shown);

    // Written back as read: the stored values stay; a new value replaces one.
    const read = await vigil.alertChannels.get(a, channel.id);
    const headers = (read.config as typeof hook).headers.map((h) => (h.key === 'X-Team' ? { ...h, value: 'team-2' } : h));
    await vigil.alertChannels.update(a, channel.id, { config: { ...read.config, headers } });
    expect((await vigil.alertChannels.getForDelivery(a, channel.id)).config).toMatchObject({
      headers: hook.headers.map((h) => ({ ...h, value: h.key === 'X-Team' ? 'team-2' : h.value })),
    });
    expect(await stored('alert_channels')).not.toContain('team-2');
  });

  it('a chat channel\'s URL is sealed and shows only its scheme and host; sent back masked it is kept', async () => {
    const { vigil, a, stored } = await setup();
    for (const type of ['CHAT', 'CHAT_APP'] as const) {
      const url = `https://hooks.slack.com/services/${type}/secret-path-${type}`;
      const channel = await vigil.alertChannels.create(a, { type, config: { url } });
      expect(channel.config).toMatchObject({ url: `https://hooks.slack.com/${MASKED}` });
      expect(await stored('alert_channels')).not.toContain(`secret-path-${type}`);
      await vigil.alertChannels.update(a, channel.id, { config: channel.config, sendDegraded: true });
      // An update that leaves the config out keeps it, sealed.
      await vigil.alertChannels.update(a, channel.id, { sendRecovery: false });
      expect((await vigil.alertChannels.getForDelivery(a, channel.id)).config).toMatchObject({ url });
      await vigil.alertChannels.update(a, channel.id, { config: { url: 'https://chat.example.com/new' } });
      expect((await vigil.alertChannels.getForDelivery(a, channel.id)).config).toMatchObject({ url: 'https://chat.example.com/new' });
      const check = await vigil.checks.create(a, 'TCP', { name: type, request: { hostname: 'db.example.com', port: 5432 } });
      expect(check.alertChannels.chat).toContainEqual({ url: `https://chat.example.com/${MASKED}` });
    }
  });

  it('an API check seals its header values and basic-auth password, masks credentials in responses and runs with them opened', async () => {
    const { vigil, a, stored } = await setup();
    const check = await vigil.checks.create(a, 'API', { name: 'api', request: apiRequest });
    expect(await stored('checks')).toContain('"username":"svc"');
    for (const value of ['api-auth-value', 'api-cookie-value', 'api-plain-value', 'api-basic-password']) expect(await stored('checks')).not.toContain(value);
    const shown = { headers: [{ key: 'Authorization', value: MASKED }, { key: 'Cookie', value: MASKED }, { key: 'X-Plain', value: 'api-plain-value' }], basicAuth: { username: 'svc', password: MASKED } };
    expect(requestOf(check)).toMatchObject(shown);
    expect(requestOf((await vigil.checks.list(a, {})).items[0]!)).toMatchObject(shown);

    await vigil.checks.update(a, check.id, { request: requestOf(check), name: 'api 2' });
    const forRun = await vigil.checks.getForRun(a, check.id);
    expect(forRun.check.checkType === 'API' && forRun.check.request).toMatchObject({ headers: apiRequest.headers, basicAuth: apiRequest.basicAuth });
    expect(forRun.secrets).toEqual(expect.arrayContaining(['Bearer api-auth-value', 'api-basic-password']));
    // A value that is not the mask replaces the stored one.
    await vigil.checks.update(a, check.id, { request: { ...requestOf(check), basicAuth: { username: 'svc', password: 'new-password' } } });
    const again = await vigil.checks.getForRun(a, check.id);
    expect(again.check.checkType === 'API' && again.check.request.basicAuth).toEqual({ username: 'svc', password: 'new-password' });
    expect(await stored('checks')).not.toContain('new-password');
  });

  it('rows stored in clear before sealing read as they are and are sealed on their next write', async () => {
    const { vigil, storage, a, stored } = await setup();
    const channel = await vigil.alertChannels.create(a, { type: 'CHAT', config: { url: 'https://chat.example.com/x' } });
    const check = await vigil.checks.create(a, 'API', { name: 'api', request: apiRequest });
    // As a row written by an earlier Vigil: the same values, in clear.
    const oldChannel = (await storage.alertChannels.get(a, channel.id))!;
    await storage.alertChannels.update(a, channel.id, { ...oldChannel, config: { url: 'https://chat.example.com/old-clear-path', channel: null } } as never);
    const { accountId: _a, ...oldCheck } = (await storage.checks.get(a, check.id))!;
    await storage.checks.update(a, check.id, { ...oldCheck, request: { ...(oldCheck as { request: object }).request, ...apiRequest } } as never);

    expect((await vigil.alertChannels.get(a, channel.id)).config).toMatchObject({ url: `https://chat.example.com/${MASKED}` });
    expect((await vigil.alertChannels.getForDelivery(a, channel.id)).config).toMatchObject({ url: 'https://chat.example.com/old-clear-path' });
    const forRun = await vigil.checks.getForRun(a, check.id);
    expect(forRun.check.checkType === 'API' && forRun.check.request.basicAuth).toEqual(apiRequest.basicAuth);
    expect(requestOf(await vigil.checks.get(a, check.id))).toMatchObject({ basicAuth: { password: MASKED } });

    await vigil.alertChannels.update(a, channel.id, { sendDegraded: true });
    await vigil.checks.update(a, check.id, { name: 'renamed' });
    expect(await stored('alert_channels')).not.toContain('old-clear-path');
    for (const value of ['api-auth-value', 'api-basic-password']) expect(await stored('checks')).not.toContain(value);
    expect((await vigil.alertChannels.getForDelivery(a, channel.id)).config).toMatchObject({ url: 'https://chat.example.com/old-clear-path' });
  });

  it('checks as code: sealed credentials compare opened, so the same constructs again are unchanged', async () => {
    const { vigil, a } = await setup();
    const constructs = () => {
      const chat = new AlertChannel('chat', { type: 'CHAT', config: { url: 'https://chat.example.com/in/path' } });
      const hookChannel = new AlertChannel('hook', { type: 'WEBHOOK', config: hook });
      return [chat, hookChannel, new ApiCheck('api', { name: 'api', request: apiRequest, alertChannels: [chat, hookChannel] })];
    };
    await vigil.apply(a, constructs());
    expect((await vigil.apply(a, constructs())).summary).toEqual({ create: 0, update: 0, delete: 0, unchanged: 3 });
  });
});
