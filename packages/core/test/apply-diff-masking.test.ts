import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { AlertChannel, ApiCheck, CheckGroup } from '../src/constructs/index.js';
import { formatPlan } from '../src/cli/format-plan.js';
import type { ApplyPlan } from '../src/services/apply.js';
import { MASKED } from '../src/services/masking.js';
import { ACCOUNT_A } from './helpers.js';
import { ready } from './services-apply-support.js';

// A plan shows credentials masked as responses do: it is printed in deployment logs.

/** The plan as `vigil plan --json` and as the command prints it, with every value shown. */
const outputs = (plan: ApplyPlan) => [JSON.stringify(plan), formatPlan(plan, { verbose: true })];

/** The one change of the plan's one update, and what the plans that made and then update the resource hold as text. */
async function planChange(constructs: (v: string) => object[], field: string) {
  const { vigil } = await ready();
  const created = await vigil.apply(ACCOUNT_A, constructs('old') as never);
  const plan = await vigil.plan(ACCOUNT_A, constructs('new') as never);
  expect(plan.entries.map((e) => e.action)).toEqual(['update']);
  const change = plan.entries[0]!.changes!.find((c) => c.field === field)!;
  return { change, texts: [...outputs(created), ...outputs(plan)] };
}

const expectAbsent = (texts: string[], values: string[]) => {
  for (const text of texts) for (const value of values) expect(text).not.toContain(value);
};

describe('a plan masks credentials', () => {
  it.each(['CHAT', 'CHAT_APP'] as const)("a %s channel's URL: its scheme and host shown", async (type) => {
    const { change, texts } = await planChange((v) => [new AlertChannel('chat', { type, config: { url: `https://chat.example.com/services/path-${v}-secret` } })], 'config');
    expect(change).toMatchObject({
      from: { url: `https://chat.example.com/${MASKED}` },
      to: { url: `https://chat.example.com/${MASKED}` },
      note: 'a secret value changes',
    });
    expectAbsent(texts, ['path-old-secret', 'path-new-secret']);
  });

  it("a webhook's header values named as credentials, locked or not; other headers shown", async () => {
    const { change, texts } = await planChange((v) => [new AlertChannel('hook', {
      type: 'WEBHOOK',
      config: {
        name: 'Hook', url: 'https://hooks.example.com/in',
        headers: [{ key: 'Authorization', value: `Bearer auth-${v}-value` }, { key: 'X-Api-Key', value: `key-${v}-value` }, { key: 'X-Team', value: `team-${v}` }],
      },
    })], 'config');
    const headers = (v: string) => [
      { key: 'Authorization', value: MASKED, locked: false },
      { key: 'X-Api-Key', value: MASKED, locked: false },
      { key: 'X-Team', value: `team-${v}`, locked: false },
    ];
    expect(change).toMatchObject({ from: { headers: headers('old') }, to: { headers: headers('new') } });
    expectAbsent(texts, ['auth-old-value', 'auth-new-value', 'key-old-value', 'key-new-value']);
  });

  it("an API check's credential headers and basic-auth password; other headers shown", async () => {
    const { change, texts } = await planChange((v) => [new ApiCheck('api', {
      name: 'api',
      request: {
        url: 'https://api.example.com/health',
        headers: [{ key: 'Authorization', value: `Bearer api-auth-${v}` }, { key: 'Cookie', value: `sid=api-cookie-${v}` }, { key: 'X-Plain', value: `plain-${v}` }],
        basicAuth: { username: 'svc', password: `api-password-${v}` },
      },
    })], 'request');
    const shown = (v: string) => ({
      headers: [{ key: 'Authorization', value: MASKED }, { key: 'Cookie', value: MASKED }, { key: 'X-Plain', value: `plain-${v}` }],
      basicAuth: { username: 'svc', password: MASKED },
    });
    expect(change).toMatchObject({ from: shown('old'), to: shown('new') });
    expectAbsent(texts, ['api-auth-', 'api-cookie-', 'api-password-']);
  });

  it("a group's apiCheckDefaults credential headers and basic-auth password", async () => {
    const { change, texts } = await planChange((v) => [new CheckGroup('backend', {
      name: 'backend',
      apiCheckDefaults: {
        headers: [{ key: 'X-Auth-Token', value: `group-token-${v}` }, { key: 'X-Team', value: `team-${v}` }],
        basicAuth: { username: 'grp', password: `group-password-${v}` },
      },
    })], 'apiCheckDefaults');
    const shown = (v: string) => ({
      headers: [{ key: 'X-Auth-Token', value: MASKED }, { key: 'X-Team', value: `team-${v}` }],
      basicAuth: { username: 'grp', password: MASKED },
    });
    expect(change).toMatchObject({ from: shown('old'), to: shown('new') });
    expectAbsent(texts, ['group-token-', 'group-password-']);
  });

  it('a change of a masked value alone is noted, since both sides read the same', async () => {
    const { change } = await planChange((v) => [new ApiCheck('api', {
      name: 'api', request: { url: 'https://api.example.com/health', basicAuth: { username: 'svc', password: `pw-${v}` } },
    })], 'request');
    expect(change.note).toBe('a secret value changes');
  });
});
