/**
 * Account isolation, proven over the whole API: two accounts with one of every resource each
 * (checks of every type, a group, a channel of every type, a dashboard and its key, a maintenance
 * window, an incident, a status page with its service and incident, a client certificate, a
 * snippet, and what runs made: results, a check session, error groups, a test project's groups,
 * pings, alert deliveries). Then, on every route of the mounted router (read from the route
 * table, so a route added later is tried too, or the test names it as not covered):
 *
 * - every id of the other account, in every path parameter, answers 404 in the spec's error
 *   shape, and the database is the same before and after, row for row;
 * - no key, an unknown key, a key one character off, or a revoked key answers 401; a valid key
 *   under the other account's header answers 403;
 * - whatever an account reads with its own ids names nothing of the other account;
 * - a body that names the other account's resources is refused.
 *
 * Runs on SQLite, and on PostgreSQL when VIGIL_PG_URL is set.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tcpRunner } from '@vigil/runner-tcp';
import { webhookTransport } from '@vigil/alert-channels';
import { Receiver } from '../../packages/alert-channels/test/support/receiver.js';
import { BACKENDS, newAccount, startStack, type Credentials, type Stack } from './support/stack.js';
import {
  anyCall, foreignCalls, LABEL_KINDS, mountedRoutes, ownReads, routeName, uncovered, unknownId, unlistedRouterRoutes, type Call,
} from './support/routes.js';
import { closedPort, seedWorld, selfSigned, until, type World } from './support/world.js';

type Dump = Record<string, Record<string, unknown>[]>;

/** The database without what reading changes on purpose: when a key was last used. */
function settled(dump: Dump): Dump {
  const out: Dump = {};
  for (const [table, rows] of Object.entries(dump)) {
    out[table] = table.endsWith('api_keys')
      ? rows.map((r) => {
        const { lastUsedAt: _l, ...data } = JSON.parse(String(r.data)) as Record<string, unknown>;
        return { ...r, data };
      })
      : rows;
  }
  return out;
}

/** The rows that differ between two dumps, by table, for a failure message. */
function changes(before: Dump, after: Dump): string[] {
  const out: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = new Set((before[table] ?? []).map((r) => JSON.stringify(r)));
    const is = new Set((after[table] ?? []).map((r) => JSON.stringify(r)));
    for (const r of was) if (!is.has(r)) out.push(`${table} lost ${r.slice(0, 300)}`);
    for (const r of is) if (!was.has(r)) out.push(`${table} gained ${r.slice(0, 300)}`);
  }
  return out;
}

const ERROR_KEYS = ['error', 'message', 'statusCode'];
function isErrorBody(body: unknown, status: number): boolean {
  const b = body as Record<string, unknown> | null;
  return !!b && typeof b === 'object' && Object.keys(b).sort().join() === ERROR_KEYS.join()
    && b.statusCode === status && typeof b.error === 'string' && typeof b.message === 'string' && b.message.length > 0;
}

describe.each(BACKENDS)('account isolation on %s', (backend) => {
  let stack: Stack;
  let hook: Receiver;
  let a: World;
  let b: World;
  let revokedKey: string;

  beforeAll(async () => {
    hook = await Receiver.start();
    stack = await startStack(backend, { runners: [tcpRunner()], transports: [webhookTransport()] });
    await stack.vigil.start();
    const env = { hookUrl: hook.url, port: await closedPort(), pem: selfSigned('isolation.internal') };
    a = await seedWorld(stack, await newAccount(stack, 'Alpha'), env);
    b = await seedWorld(stack, await newAccount(stack, 'Bravo'), env);
    // From here on nothing runs in the background: every change in the database is a request's.
    await stack.vigil.stop();
    const spare = await stack.vigil.apiKeys.create(a.account.id, { name: 'revoked' });
    await stack.vigil.apiKeys.revoke(a.account.id, spare.apiKey.id);
    revokedKey = spare.key;
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await hook?.close();
  });

  it('the matrix covers every route the router mounts', () => {
    // A route mounted beside the table would skip its authentication and this matrix.
    expect(unlistedRouterRoutes(stack.vigil)).toEqual([]);
    expect(uncovered(mountedRoutes(stack.vigil))).toEqual([]);
    expect(mountedRoutes(stack.vigil).length).toBeGreaterThan(80);
  });

  const pairs = [['Alpha', 'Bravo'], ['Bravo', 'Alpha']] as const;
  const worlds = (asker: string) => (asker === 'Alpha' ? [a, b] : [b, a]) as [World, World];

  it.each(pairs)('%s naming every id of %s on every route: 404 in the error shape, and not a row changes', async (asker) => {
    const [own, other] = worlds(asker);
    const before = settled(await stack.dump());
    const failures: string[] = [];
    let tried = 0;
    for (const route of mountedRoutes(stack.vigil)) {
      for (const call of foreignCalls(route, own.ids, other.ids)) {
        tried++;
        const res = await stack.api(call.method, call.path, own.account.credentials, call.body);
        const what = `${routeName(route)} as ${call.path}`;
        if (res.text.includes(other.marker)) failures.push(`${what}: the answer shows the other account's data: ${res.text.slice(0, 300)}`);
        if (call.filled.some((f) => LABEL_KINDS.has(f.kind))) {
          // A label (a test project) of the other account reads as one nobody used.
          const fresh = call.path.replace(encodeURIComponent(call.filled.find((f) => LABEL_KINDS.has(f.kind))!.id), unknownId('project', 'x'));
          const unknown = await stack.api(call.method, fresh, own.account.credentials, call.body);
          if (res.status !== unknown.status || res.text !== unknown.text) failures.push(`${what}: ${res.status} ${res.text} differs from an unknown label's ${unknown.status} ${unknown.text}`);
          continue;
        }
        if (res.status !== 404 || !isErrorBody(res.body, 404) || res.body.error !== 'Not Found') {
          failures.push(`${what}: ${res.status} ${res.text.slice(0, 300)}`);
        }
      }
    }
    failures.push(...changes(before, settled(await stack.dump())));
    expect(failures, failures.join('\n')).toEqual([]);
    expect(tried).toBeGreaterThan(150);
  }, 60_000);

  it('no route answers without a valid key (401), nor with a valid key under the other account\'s header (403); nothing changes', async () => {
    const unknownKey = `vgl_${randomBytes(32).toString('base64url')}`;
    const lastChar = b.account.key.at(-1)!;
    const offByOne = `${b.account.key.slice(0, -1)}${lastChar === 'A' ? 'B' : 'A'}`;
    const tries: [string, Credentials, number][] = [
      ['no credentials', {}, 401],
      ['no key, the account header only', { account: b.account.id }, 401],
      ['an unknown key', { authorization: `Bearer ${unknownKey}`, account: b.account.id }, 401],
      ['the key one character off', { authorization: `Bearer ${offByOne}`, account: b.account.id }, 401],
      ['a revoked key', { authorization: `Bearer ${revokedKey}`, account: a.account.id }, 401],
      ['the key in another scheme', { authorization: `Basic ${Buffer.from(`x:${b.account.key}`).toString('base64')}`, account: b.account.id }, 401],
      ['a valid key under the other account\'s header', { authorization: `Bearer ${a.account.key}`, account: b.account.id }, 403],
    ];
    const before = settled(await stack.dump());
    const failures: string[] = [];
    const routes = mountedRoutes(stack.vigil);
    for (const route of routes) {
      const call: Call = anyCall(route, b.ids, b.ids);
      for (const [label, credentials, status] of tries) {
        const res = await stack.api(call.method, call.path, credentials, call.body);
        if (res.status !== status || !isErrorBody(res.body, status)) failures.push(`${routeName(route)} with ${label}: ${res.status} ${res.text.slice(0, 200)}`);
        if (res.text.includes(b.marker) || res.text.includes(b.account.key)) failures.push(`${routeName(route)} with ${label}: the answer shows the account's data`);
      }
    }
    failures.push(...changes(before, settled(await stack.dump())));
    expect(failures, failures.join('\n')).toEqual([]);
    expect(stack.responses.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(routes.length * 6);
  }, 60_000);

  it.each(pairs)('what %s reads on every route with its own ids names nothing of %s', async (asker) => {
    const [own, other] = worlds(asker);
    const failures: string[] = [];
    let read = 0;
    for (const route of mountedRoutes(stack.vigil)) {
      for (const call of ownReads(route, own.ids)) {
        const res = await stack.api('get', call.path, own.account.credentials);
        if (res.status >= 500) failures.push(`${call.path}: ${res.status} ${res.text.slice(0, 200)}`);
        if (res.status === 200) read++;
        const named = [other.marker, ...other.strings, ...other.sequences].filter((s) => res.text.includes(s));
        if (named.length) failures.push(`${call.path}: names ${named.join(', ')}: ${res.text.slice(0, 300)}`);
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
    // Lists, nested lists, results, deliveries, statuses, analytics, reporting: most reads find something.
    expect(read).toBeGreaterThan(50);
  }, 60_000);

  it.each(pairs)('bodies of %s that name resources of %s are refused, and not a row changes', async (asker) => {
    const [own, other] = worlds(asker);
    const [otherTcp] = other.ids.check;
    const otherGroup = Number(other.ids.group[0]);
    const otherChannel = Number(other.ids.channel[0]);
    const otherSnippet = Number(other.ids.snippet[0]);
    const otherService = other.ids.service[0]!;
    const [ownTcp] = own.ids.check;
    const tcp = { name: 'probe', request: { hostname: '127.0.0.1', port: 1 } };
    const cases: [string, 'post' | 'put', string, unknown][] = [
      ['a check in their group', 'post', '/v1/checks/tcp', { ...tcp, groupId: otherGroup }],
      ['a check moved into their group', 'put', `/v1/checks/tcp/${ownTcp}`, { ...tcp, groupId: otherGroup }],
      ['a check alerting their channel', 'post', '/v1/checks/tcp', { ...tcp, alertChannelSubscriptions: [{ alertChannelId: otherChannel, activated: true }] }],
      ['a group alerting their channel', 'post', '/v2/check-groups', { name: 'probe', alertChannelSubscriptions: [{ alertChannelId: otherChannel, activated: true }] }],
      ['a group running their setup snippet', 'post', '/v2/check-groups', { name: 'probe', setupSnippetId: otherSnippet }],
      ['a group running their teardown snippet', 'put', `/v2/check-groups/${own.ids.group[0]}`, { name: 'probe', tearDownSnippetId: otherSnippet }],
      ['their check on our channel', 'put', `/v1/alert-channels/${own.ids.channel[0]}/subscriptions`, [{ checkId: otherTcp, activated: true }]],
      ['their group on our channel', 'put', `/v1/alert-channels/${own.ids.channel[0]}/subscriptions`, [{ groupId: otherGroup, activated: true }]],
      ['an incident on their dashboard', 'post', '/v1/incidents', { name: 'x', dashboardId: Number(other.ids.dashboard[0]), incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }] }],
      ['a status page showing their service', 'post', '/v1/status-pages', { name: 'x', url: `x-${randomBytes(3).toString('hex')}`, cards: [{ name: 'x', serviceIds: [otherService] }] }],
      ['our status page showing their service', 'put', `/v1/status-pages/${own.ids.statusPage[0]}`, { cards: [{ name: 'x', serviceIds: [otherService] }] }],
      ['a status-page incident on their service', 'post', '/v1/status-pages/incidents', { name: 'x', serviceIds: [otherService], incidentUpdate: { description: 'x' } }],
      ['a session of their check', 'post', '/v1/check-sessions/trigger', { target: { checkId: [otherTcp] } }],
    ];
    const before = settled(await stack.dump());
    const failures: string[] = [];
    for (const [label, method, path, body] of cases) {
      const res = await stack.api(method, path, own.account.credentials, body);
      if (![400, 404].includes(res.status) || (!isErrorBody(res.body, res.status) && !(res.status === 400 && res.body?.validation))) {
        failures.push(`${label} (${method.toUpperCase()} ${path}): ${res.status} ${res.text.slice(0, 300)}`);
      }
      if (res.text.includes(other.marker)) failures.push(`${label}: the answer shows the other account's data`);
    }
    // Cancelling sequences of theirs through a session of ours cancels nothing of theirs.
    const cancel = await stack.api('post', `/v1/check-sessions/${own.ids.session[0]}/cancel`, own.account.credentials, { sequenceId: other.sequences });
    if (cancel.status >= 500 || cancel.text.includes(other.marker)) failures.push(`cancel with their sequences: ${cancel.status} ${cancel.text.slice(0, 300)}`);
    failures.push(...changes(before, settled(await stack.dump())));
    expect(failures, failures.join('\n')).toEqual([]);
  }, 60_000);

  it.each(pairs)('a check of %s whose triggerIncident names a service of %s opens no incident there when it fails', async (asker) => {
    const [own, other] = worlds(asker);
    // The tables an incident on their service would touch (the engine, running for this case, may
    // do its own work for their failing checks meanwhile: alert ticks, statuses).
    const theirPages = async () => Object.fromEntries(Object.entries(rowsOf(await stack.dump(), other.account.id)).filter(([t]) => /status_page|services/.test(t)));
    const before = await theirPages();
    expect(Object.keys(before).length).toBeGreaterThanOrEqual(3);
    // The name is taken as given, as the name of a service deleted later would be; at run time
    // the engine opens incidents only on services of the check's own account.
    const res = await stack.api('post', '/v1/checks/tcp?autoAssignAlerts=false', own.account.credentials, {
      name: 'probe', request: { hostname: '127.0.0.1', port: 1 }, frequency: 1440,
      triggerIncident: { serviceId: other.ids.service[0], name: 'hijacked', description: 'x', notifySubscribers: true },
    });
    expect(res.text).not.toContain(other.marker);
    if (res.status === 201) {
      const warnings = () => stack.logs.filter((l) => l.msg.startsWith('incident trigger: could not open') && l.meta.checkId === res.body.id);
      await stack.vigil.start();
      try {
        const { sessions } = (await stack.api('post', '/v1/check-sessions/trigger', own.account.credentials, { target: { checkId: [res.body.id] } })).body;
        const done = await stack.api('get', `/v1/check-sessions/${sessions[0].checkSessionId}/completion?maxWaitSeconds=20`, own.account.credentials);
        expect(done.body.status).toBe('FAILED');
        await until(async () => warnings().length > 0, 'the incident trigger to give up');
      } finally {
        await stack.vigil.stop();
      }
    } else {
      expect([400, 404]).toContain(res.status);
    }
    const incidents = await stack.api('get', '/v1/status-pages/incidents', other.account.credentials);
    expect(incidents.text).not.toContain('hijacked');
    expect(changes(before, await theirPages()), 'rows of the other account changed').toEqual([]);
  }, 60_000);
});

/** The rows that belong to one account (its account row included). */
function rowsOf(dump: Dump, accountId: string): Dump {
  const out: Dump = {};
  for (const [table, rows] of Object.entries(dump)) {
    out[table] = rows.filter((r) => r.account_id === accountId || (table.endsWith('accounts') && r.id === accountId));
  }
  return out;
}
