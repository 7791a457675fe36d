import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVigil } from '../src/container.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { MASKED } from '../src/services/masking.js';
import type { CheckGroupResponse } from '../src/model/check-group.js';
import { CheckGroup } from '../src/constructs/index.js';

// A group's apiCheckDefaults carry credentials as an API check's request does: sealed at rest,
// masked in responses, kept when sent back masked, opened where a member check runs.

async function setup() {
  const storage = memoryStorage();
  const vigil = createVigil({ storage, secretKey: randomBytes(32), clock: new FakeClock('2026-05-01T12:00:00.000Z') });
  const a = (await vigil.accounts.ensure()).id;
  const stored = async () => JSON.stringify(await storage.raw.dump('check_groups'));
  return { vigil, storage, a, stored };
}

const defaults = {
  url: 'http://127.0.0.1:8080/v1',
  headers: [
    { key: 'Authorization', value: 'Bearer group-auth-value' },
    { key: 'X-Group-Key', value: 'group-key-value' },
    { key: 'X-Team', value: 'group-plain-value' },
  ],
  queryParameters: [{ key: 'region', value: 'eu' }],
  basicAuth: { username: 'grp', password: 'group-basic-password' },
};
const planted = ['group-auth-value', 'group-key-value', 'group-plain-value', 'group-basic-password'];

const shown = {
  url: defaults.url,
  headers: [{ key: 'Authorization', value: MASKED }, { key: 'X-Group-Key', value: MASKED }, { key: 'X-Team', value: 'group-plain-value' }],
  queryParameters: [{ key: 'region', value: 'eu' }],
  basicAuth: { username: 'grp', password: MASKED },
};

/** What an API check in the group sends when it runs (the engine's view of it). */
async function requestForRun(vigil: Awaited<ReturnType<typeof setup>>['vigil'], a: string, checkId: string) {
  const forRun = await vigil.checks.getForRun(a, checkId);
  if (forRun.check.checkType !== 'API') throw new Error('not an API check');
  return { request: forRun.check.request, secrets: forRun.secrets };
}

describe("a group's apiCheckDefaults credentials", () => {
  it('are sealed at rest, masked in every response, and opened for a member check that runs', async () => {
    const { vigil, a, stored } = await setup();
    const group = await vigil.checkGroups.create(a, { name: 'backend', apiCheckDefaults: defaults });
    expect(await stored()).toContain('"username":"grp"');
    for (const value of planted) expect(await stored()).not.toContain(value);
    expect(group.apiCheckDefaults).toMatchObject(shown);
    expect((await vigil.checkGroups.get(a, group.id)).apiCheckDefaults).toMatchObject(shown);
    expect((await vigil.checkGroups.list(a, {})).items[0]!.apiCheckDefaults).toMatchObject(shown);

    const check = await vigil.checks.create(a, 'API', { name: 'users', groupId: group.id, request: { url: '/users' } });
    const run = await requestForRun(vigil, a, check.id);
    expect(run.request).toMatchObject({ url: 'http://127.0.0.1:8080/v1/users', headers: defaults.headers, basicAuth: defaults.basicAuth });
    expect(run.secrets).toEqual(expect.arrayContaining(['Bearer group-auth-value', 'group-basic-password']));
  });

  it('sent back masked keep the stored values; a new value replaces one and is sealed', async () => {
    const { vigil, a, stored } = await setup();
    const group = await vigil.checkGroups.create(a, { name: 'backend', apiCheckDefaults: defaults });
    const check = await vigil.checks.create(a, 'API', { name: 'users', groupId: group.id, request: { url: '/users' } });

    const read = await vigil.checkGroups.get(a, group.id);
    await vigil.checkGroups.update(a, group.id, { name: 'backend 2', apiCheckDefaults: read.apiCheckDefaults });
    expect((await requestForRun(vigil, a, check.id)).request).toMatchObject({ headers: defaults.headers, basicAuth: defaults.basicAuth });
    for (const value of planted) expect(await stored()).not.toContain(value);

    const headers = read.apiCheckDefaults.headers.map((h) => (h.key === 'X-Group-Key' ? { ...h, value: 'group-key-2' } : h));
    await vigil.checkGroups.update(a, group.id, {
      name: 'backend 2', apiCheckDefaults: { ...read.apiCheckDefaults, headers, basicAuth: { username: 'grp', password: 'group-password-2' } },
    });
    expect((await requestForRun(vigil, a, check.id)).request).toMatchObject({
      headers: [defaults.headers[0], { key: 'X-Group-Key', value: 'group-key-2' }, defaults.headers[2]],
      basicAuth: { username: 'grp', password: 'group-password-2' },
    });
    for (const value of ['group-key-2', 'group-password-2']) expect(await stored()).not.toContain(value);
    // An update that leaves the defaults out keeps them.
    await vigil.checkGroups.update(a, group.id, { name: 'backend 3' });
    expect((await requestForRun(vigil, a, check.id)).request).toMatchObject({ basicAuth: { password: 'group-password-2' } });
  });

  it('a header value at its maximum stays valid sealed: an unrelated update validates it opened', async () => {
    const { vigil, a } = await setup();
    const long = 'v'.repeat(4096);
    const group = await vigil.checkGroups.create(a, { name: 'backend', apiCheckDefaults: { headers: [{ key: 'X-Long', value: long }] } });
    await vigil.checkGroups.update(a, group.id, { name: 'renamed' });
    expect((await vigil.checkGroups.get(a, group.id)).apiCheckDefaults.headers).toEqual([{ key: 'X-Long', value: long }]);
  });

  it('stored in clear before sealing read as they are and are sealed on their next write', async () => {
    const { vigil, storage, a, stored } = await setup();
    const group = await vigil.checkGroups.create(a, { name: 'backend' });
    const check = await vigil.checks.create(a, 'API', { name: 'users', groupId: group.id, request: { url: 'https://api.example.com/users' } });
    // As a row written by an earlier Vigil: the same values, in clear.
    const { accountId: _a, ...old } = (await storage.checkGroups.get(a, group.id))!;
    await storage.checkGroups.update(a, group.id, { ...old, apiCheckDefaults: { ...old.apiCheckDefaults, ...defaults } });
    expect(await stored()).toContain('group-basic-password');

    const read: CheckGroupResponse = await vigil.checkGroups.get(a, group.id);
    expect(read.apiCheckDefaults).toMatchObject(shown);
    expect((await requestForRun(vigil, a, check.id)).request).toMatchObject({ headers: defaults.headers, basicAuth: defaults.basicAuth });

    await vigil.checkGroups.update(a, group.id, { name: 'renamed' });
    for (const value of planted) expect(await stored()).not.toContain(value);
    expect((await requestForRun(vigil, a, check.id)).request).toMatchObject({ headers: defaults.headers, basicAuth: defaults.basicAuth });
  });

  it('checks as code: compared opened, so the same group constructs again are unchanged', async () => {
    const { vigil, a } = await setup();
    const constructs = () => [new CheckGroup('backend', { name: 'backend', apiCheckDefaults: defaults })];
    await vigil.apply(a, constructs());
    expect((await vigil.apply(a, constructs())).summary).toEqual({ create: 0, update: 0, delete: 0, unchanged: 1 });
  });
});
