import { isValidationError, type ValidationIssue, type Vigil } from '@vigil/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { formBody } from '../src/forms/body.js';
import { formFields, type Posted } from '../src/forms/fields.js';
import { findFormResource, formResources, heartbeatPingPath, installedCheckTypes, sendTestAlert } from '../src/forms/resources.js';
import type { FormResource } from '../src/forms/resource-types.js';
import { findField, setup, submit } from './forms-support.js';
import type { FakeTransport } from '@vigil/core/testing';

let vigil: Vigil;
let a: string;
let webhook: FakeTransport;

beforeEach(async () => {
  ({ vigil, accountId: a, webhook } = await setup());
});

function resource(key: string): FormResource {
  const r = findFormResource(vigil, key);
  if (!r) throw new Error(`no resource ${key}`);
  return r;
}

/** The create form, filled in as typed, posted, read and given to the service. */
async function create(key: string, typed: Posted): Promise<Record<string, unknown>> {
  const r = resource(key);
  const form = formFields(r.createSchema, undefined, [], r.formOptions);
  const { body, issues } = formBody(r.createSchema, submit(form.fields, typed), 'create');
  expect(issues).toEqual([]);
  return (await r.create!(vigil, a, body)) as Record<string, unknown>;
}

/** The edit form of a stored resource, posted with `typed` changed, given to the service's update. */
async function edit(key: string, id: string | number, typed: Posted = {}): Promise<Record<string, unknown>> {
  const r = resource(key);
  const form = formFields(r.createSchema, r.values(await r.get(vigil, a, id)), [], r.formOptions);
  const { body, issues } = formBody(r.createSchema, submit(form.fields, typed), 'update');
  expect(issues).toEqual([]);
  return (await r.update!(vigil, a, id, body)) as Record<string, unknown>;
}

/** The issues a create form's submission gets: the form's own, else the service's. */
async function failedCreate(key: string, typed: Posted): Promise<ValidationIssue[]> {
  const r = resource(key);
  const form = formFields(r.createSchema, undefined, [], r.formOptions);
  const { body, issues } = formBody(r.createSchema, submit(form.fields, typed), 'create');
  if (issues.length) return issues;
  const err = await r.create!(vigil, a, body).then(() => null, (e: unknown) => e);
  if (!isValidationError(err)) throw new Error(`expected a ValidationError, got ${String(err)}`);
  return err.issues;
}

const unstamped = ({ updated_at: _u, ...rest }: Record<string, unknown>) => rest;

describe('the registry', () => {
  it('lists the installed check types: built-in ones with a runner, HEARTBEAT, and the plugin\'s', () => {
    expect(installedCheckTypes(vigil)).toEqual(['TCP', 'API', 'BROWSER', 'HEARTBEAT', 'SMTP']);
    const keys = formResources(vigil).map((r) => r.key);
    expect(keys).toEqual(expect.arrayContaining([
      'check-tcp', 'check-api', 'check-browser', 'check-heartbeat', 'check-smtp', 'check-group', 'alert-channel-email', 'alert-channel-webhook',
      'alert-subscriptions', 'maintenance-window', 'dashboard', 'status-page', 'status-page-service', 'status-page-incident',
    ]));
    expect(keys).not.toContain('check-dns');
  });
});

describe('forms round trips on a real Vigil', () => {
  it('TCP: created from the form, and an unchanged edit form changes nothing', async () => {
    const check = await create('check-tcp', { name: 'db', 'request.hostname': '127.0.0.1', 'request.port': '5432', tags: 'prod\r\n  eu \r\n' });
    expect(check).toMatchObject({ name: 'db', checkType: 'TCP', tags: ['prod', 'eu'], request: { hostname: '127.0.0.1', port: 5432 }, frequency: 10 });
    const again = await edit('check-tcp', check.id as string);
    expect(unstamped(again)).toEqual(unstamped(check));
    const changed = await edit('check-tcp', check.id as string, { 'request.port': '6543', muted: ['false', 'true'], description: '' });
    expect(changed).toMatchObject({ request: { port: 6543 }, muted: true, description: null });
  });

  it('TCP: port 70000 comes back on the request.port field', async () => {
    const issues = await failedCreate('check-tcp', { name: 'db', 'request.hostname': 'h', 'request.port': '70000' });
    const r = resource('check-tcp');
    const form = formFields(r.createSchema, undefined, issues, r.formOptions);
    const port = findField(form.fields, 'request.port');
    expect(port.error).toBe('must be between 1 and 65535');
    expect(port.describedBy).toBe('f-request.port-error');
    expect(port).toMatchObject({ kind: 'number', min: 1, max: 65535, step: 1, required: true });
    expect(form.issues).toEqual([]);
  });

  it('API: the nested request with its JSON assertions and headers', async () => {
    const check = await create('check-api', {
      name: 'health',
      'request.url': 'http://127.0.0.1:8080/health',
      'request.method': 'POST',
      'request.headers': '[{"key": "Accept", "value": "application/json"}]',
      'request.assertions': '[\r\n  {"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"}\r\n]',
    });
    expect(check).toMatchObject({
      request: { method: 'POST', headers: [{ key: 'Accept', value: 'application/json' }], assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    expect(unstamped(await edit('check-api', check.id as string))).toEqual(unstamped(check));
  });

  it('API: assertions that are not JSON are an issue of that field, not a throw', async () => {
    const issues = await failedCreate('check-api', { name: 'x', 'request.url': 'http://h/', 'request.assertions': '[{"source": ' });
    expect(issues).toEqual([{ path: 'request.assertions', message: expect.stringMatching(/^must be valid JSON/) }]);
    const r = resource('check-api');
    const form = formFields(r.createSchema, undefined, issues, { ...r.formOptions, posted: { 'request.assertions': '[{"source": ' } });
    expect(findField(form.fields, 'request.assertions')).toMatchObject({ kind: 'json', value: '[{"source": ', error: issues[0]!.message });
  });

  it('BROWSER: the script is a code field, its line breaks kept; a bad variable key lands on environmentVariables', async () => {
    const r = resource('check-browser');
    const form = formFields(r.createSchema, undefined, [], r.formOptions);
    expect(findField(form.fields, 'script').kind).toBe('code');
    const script = "const page = await browser.newPage();\nawait page.goto('http://127.0.0.1/');\n";
    const check = await create('check-browser', { name: 'home', script: script.replace(/\n/g, '\r\n'), frequency: '5' });
    expect(check).toMatchObject({ script, frequency: 5 });
    expect(unstamped(await edit('check-browser', check.id as string))).toEqual(unstamped(check));

    const issues = await failedCreate('check-browser', {
      name: 'home', script, environmentVariables: JSON.stringify([{ key: 'OK', value: '1' }, { key: '3x', value: '2' }]),
    });
    const placed = formFields(r.createSchema, undefined, issues, r.formOptions);
    expect(findField(placed.fields, 'environmentVariables').error).toMatch(/^1\.key: must start with a letter/);
  });

  it('HEARTBEAT: created from the form; its edit shows the ping path and keeps its token', async () => {
    const check = await create('check-heartbeat', { name: 'backup', 'heartbeat.period': '1', 'heartbeat.periodUnit': 'hours', 'heartbeat.grace': '10', 'heartbeat.graceUnit': 'minutes' });
    const path = heartbeatPingPath(check);
    expect(path).toMatch(/^\/ping\/\w+/);
    const edited = await edit('check-heartbeat', check.id as string, { 'heartbeat.grace': '20' });
    expect(heartbeatPingPath(edited)).toBe(path);
    expect(edited).toMatchObject({ heartbeat: { period: 1, periodUnit: 'hours', grace: 20, graceUnit: 'minutes' } });
    const pinged = await vigil.heartbeats.ping(path!.slice('/ping/'.length));
    expect(pinged.checkId).toBe(check.id);
  });

  it('a plugin check type: its own fields beside the common ones', async () => {
    const r = resource('check-smtp');
    expect(r.label).toBe('SMTP check');
    const form = formFields(r.createSchema, undefined, [], r.formOptions);
    expect(findField(form.fields, 'port')).toMatchObject({ kind: 'number', value: '25' });
    expect(findField(form.fields, 'starttls')).toMatchObject({ kind: 'checkbox', value: true });
    const check = await create('check-smtp', { name: 'mail', host: 'mail.example.com', starttls: 'false' });
    expect(check).toMatchObject({ checkType: 'SMTP', host: 'mail.example.com', port: 25, starttls: false, expectBanner: null });
    expect(unstamped(await edit('check-smtp', check.id as string))).toEqual(unstamped(check));
    const issues = await failedCreate('check-smtp', { name: 'mail', host: ' ', port: 'many' });
    expect(issues).toEqual([{ path: 'port', message: 'must be a number' }]);
  });

  it('an alert channel: webhook config with a secret shown as a password, and a test alert through its transport', async () => {
    const r = resource('alert-channel-webhook');
    const form = formFields(r.createSchema, undefined, [], r.formOptions);
    expect(findField(form.fields, 'config.webhookSecret').kind).toBe('password');
    expect(form.fields.some((f) => f.name === 'type')).toBe(false);
    const channel = await create('alert-channel-webhook', { 'config.name': 'ops', 'config.url': 'https://hooks.example.com/x', 'config.webhookSecret': 's3cret' });
    expect(channel).toMatchObject({ type: 'WEBHOOK', config: { name: 'ops', webhookSecret: '********' } });
    expect(unstamped(await edit('alert-channel-webhook', channel.id as number))).toEqual(unstamped(channel));
    // The masked secret was posted back: the stored one is kept.
    const opened = await vigil.alertChannels.getForDelivery(a, channel.id as number);
    expect((opened.config as { webhookSecret: string }).webhookSecret).toBe('s3cret');

    await sendTestAlert(vigil, a, channel.id as number);
    expect(webhook.sent).toHaveLength(1);
    expect(webhook.sent[0]!.alert.title).toMatch(/test alert/i);

    const issues = await failedCreate('alert-channel-webhook', { 'config.name': 'ops', 'config.url': 'not a url', sslExpiryThreshold: '31' });
    const placed = formFields(r.createSchema, undefined, issues, r.formOptions);
    expect(findField(placed.fields, 'config.url').error).toBeTruthy();
    expect(findField(placed.fields, 'sslExpiryThreshold').error).toBe('must be between 1 and 30');
  });

  it('a maintenance window: datetime fields read as UTC, the rule across fields lands on endsAt', async () => {
    const w = await create('maintenance-window', { name: 'upgrade', startsAt: '2026-06-01T10:00', endsAt: '2026-06-01T12:00:30', repeatUnit: 'WEEK', tags: 'db' });
    expect(w).toMatchObject({ startsAt: '2026-06-01T10:00:00.000Z', endsAt: '2026-06-01T12:00:30.000Z', repeatUnit: 'WEEK', tags: ['db'], timezone: 'UTC' });
    const r = resource('maintenance-window');
    const form = formFields(r.createSchema, r.values(await r.get(vigil, a, w.id as number)), [], r.formOptions);
    expect(findField(form.fields, 'startsAt')).toMatchObject({ kind: 'datetime', value: '2026-06-01T10:00:00' });
    expect(unstamped(await edit('maintenance-window', w.id as number))).toEqual(unstamped(w));
    const issues = await failedCreate('maintenance-window', { name: 'x', startsAt: '2026-06-01T10:00', endsAt: '2026-06-01T09:00', repeatUnit: 'DAY' });
    expect(issues).toEqual([{ path: 'endsAt', message: 'must be after startsAt' }]);
  });

  it('a status page with a card naming a service, and an incident on that service', async () => {
    const service = await create('status-page-service', { name: 'API' });
    const page = await create('status-page', {
      name: 'Acme status', url: 'acme-status', cards: JSON.stringify([{ name: 'Core', serviceIds: [service.id] }]), 'themeColors.light.bodyBackgroundColor': '#ffffff',
    });
    expect(page).toMatchObject({ url: 'acme-status', themeColors: { light: { bodyBackgroundColor: '#ffffff' } }, cards: [{ name: 'Core', services: [{ id: service.id }] }] });
    const again = await edit('status-page', page.id as string);
    expect(again).toMatchObject({ cards: [{ name: 'Core', services: [{ id: service.id }] }], themeColors: page.themeColors });
    // Emptying the only theme colour on the edit form clears it rather than keeping the stored one.
    const cleared = await edit('status-page', page.id as string, { 'themeColors.light.bodyBackgroundColor': '' });
    expect((cleared.themeColors as { light?: Record<string, unknown> }).light?.bodyBackgroundColor ?? null).toBeNull();

    const incident = await create('status-page-incident', { name: 'Slow API', serviceIds: String(service.id), 'incidentUpdate.description': 'Looking into it' });
    expect(incident).toMatchObject({ name: 'Slow API', status: 'INVESTIGATING', services: [{ id: service.id }] });
    expect(await resource('status-page-incident').get(vigil, a, incident.id as string)).toMatchObject({ name: 'Slow API' });

    const issues = await failedCreate('status-page', { name: 'x', url: 'not a subdomain!' });
    expect(issues.map((i) => i.path)).toEqual(['url']);
  });

  it('alert subscriptions: the service\'s item paths come back under the form\'s field', async () => {
    const channel = await create('alert-channel-email', { 'config.address': 'ops@example.com' });
    const r = resource('alert-subscriptions');
    const err = await r.update!(vigil, a, channel.id as number, { subscriptions: [{ checkId: 'nope' }] }).then(() => null, (e: unknown) => e);
    expect(isValidationError(err) && err.issues).toEqual([{ path: 'subscriptions.0.checkId', message: 'is not a check of this account' }]);
  });
});
