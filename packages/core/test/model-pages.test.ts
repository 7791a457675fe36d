import { describe, expect, it } from 'vitest';
import { ValidationError } from '../src/errors.js';
import { ClientCertificateCreateSchema } from '../src/model/client-certificate.js';
import { DashboardCreateSchema, DashboardUpdateSchema } from '../src/model/dashboard.js';
import { ErrorGroupPatchSchema } from '../src/model/error-group.js';
import { IncidentCreateSchema, IncidentUpdateCreateSchema } from '../src/model/incident.js';
import { MaintenanceWindowCreateSchema, MaintenanceWindowUpdateSchema } from '../src/model/maintenance-window.js';
import { parse } from '../src/model/parse.js';
import { ServiceCreateSchema, ServiceListQuerySchema, StatusPageCreateSchema, StatusPageIncidentCreateSchema } from '../src/model/status-page.js';
import { keysOf } from './assertions.js';


const window = { name: 'db upgrade', startsAt: '2026-05-01T01:00:00Z', endsAt: '2026-05-01T03:00:00Z', repeatUnit: 'WEEK' };

describe('maintenance window', () => {
  it('fills the defaults and normalises dates', () => {
    expect(parse(MaintenanceWindowCreateSchema, window)).toEqual({
      name: 'db upgrade', startsAt: '2026-05-01T01:00:00.000Z', endsAt: '2026-05-01T03:00:00.000Z', repeatUnit: 'WEEK',
      tags: [], repeatInterval: null, repeatEndsAt: null, pauseAllChecks: false, silenceAlertsTags: [], silenceAllAlerts: false,
      timezone: 'UTC',
    });
  });

  it.each([
    [{ name: 'x'.repeat(200) }, []], [{ name: 'x'.repeat(201) }, ['name']],
    [{ repeatInterval: 0 }, ['repeatInterval']], [{ repeatInterval: 1 }, []], [{ repeatInterval: 365 }, []], [{ repeatInterval: 366 }, ['repeatInterval']],
    [{ repeatUnit: 'YEAR' }, ['repeatUnit']], [{ endsAt: '2026-05-01T01:00:00Z' }, ['endsAt']],
    [{ repeatEndsAt: '2026-04-01' }, ['repeatEndsAt']], [{ timezone: 'Mars/Olympus' }, ['timezone']], [{ timezone: 'Europe/Berlin' }, []],
    [{ startsAt: '2026-02-31' }, ['startsAt']], [{ startsAt: 'tomorrow' }, ['startsAt']],
  ])('%j names %j', (change, keys) => {
    expect(keysOf(() => parse(MaintenanceWindowCreateSchema, { ...window, ...change }))).toEqual(keys);
  });

  it('PUT requires name, startsAt, endsAt and repeatUnit', () => {
    expect(keysOf(() => parse(MaintenanceWindowUpdateSchema, {}))).toEqual(['name', 'startsAt', 'endsAt', 'repeatUnit']);
    expect(parse(MaintenanceWindowUpdateSchema, window).tags).toBeUndefined();
  });
});

describe('dashboard', () => {
  it('fills the spec\'s defaults', () => {
    expect(parse(DashboardCreateSchema, { header: 'Ops' })).toMatchObject({
      width: 'FULL', refreshRate: 60, paginate: true, paginationRate: 60, checksPerPage: 15, useTagsAndOperator: false,
      hideTags: false, enableIncidents: false, expandChecks: false, tags: [], showHeader: true, showCheckRunLinks: false,
      showGroupNames: true, customCSS: '', isPrivate: false, showP95: true, showP99: true, customDomain: null, logo: null,
    });
  });

  it.each([
    [{ checksPerPage: 0 }, ['checksPerPage']], [{ checksPerPage: 1 }, []], [{ checksPerPage: 20 }, []], [{ checksPerPage: 21 }, ['checksPerPage']],
    [{ checksPerPage: null }, []], [{ refreshRate: 120 }, ['refreshRate']], [{ paginationRate: 300 }, []], [{ width: '800PX' }, ['width']],
    [{ customUrl: 'My-Board' }, []], [{ customUrl: 'bad url' }, ['customUrl']], [{ logo: 'javascript:alert(1)' }, ['logo']],
    [{ customDomain: 'status.example.com' }, []], [{ customDomain: 'https://x.com/' }, ['customDomain']], [{ header: '' }, ['header']],
  ])('%j names %j', (change, keys) => {
    expect(keysOf(() => parse(DashboardCreateSchema, { header: 'Ops', ...change }))).toEqual(keys);
  });

  it('customUrl is stored lower-case; an update has no defaults', () => {
    expect(parse(DashboardCreateSchema, { header: 'x', customUrl: 'My-Board' }).customUrl).toBe('my-board');
    expect(parse(DashboardUpdateSchema, {})).toEqual({});
  });
});

describe('incident', () => {
  const update = { status: 'INVESTIGATING', description: 'Looking' };
  it('exactly one update on create; impact defaults to MINOR', () => {
    expect(parse(IncidentCreateSchema, { name: 'Outage', dashboardId: 1, incidentUpdates: [update] }).impact).toBe('MINOR');
    expect(keysOf(() => parse(IncidentCreateSchema, { name: 'Outage', dashboardId: 1, incidentUpdates: [] }))).toEqual(['incidentUpdates']);
    expect(keysOf(() => parse(IncidentCreateSchema, { name: 'Outage', dashboardId: 1, incidentUpdates: [update, update] }))).toEqual(['incidentUpdates']);
    expect(keysOf(() => parse(IncidentCreateSchema, {}))).toEqual(['name', 'dashboardId', 'incidentUpdates']);
    expect(keysOf(() => parse(IncidentCreateSchema, { name: 'x', dashboardId: 1, impact: 'HUGE', incidentUpdates: [update] }))).toEqual(['impact']);
  });

  it('update statuses', () => {
    for (const status of ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'MAINTENANCE']) {
      expect(parse(IncidentUpdateCreateSchema, { status, description: 'd' }).status).toBe(status);
    }
    expect(keysOf(() => parse(IncidentUpdateCreateSchema, { status: 'DONE', description: 'd' }))).toEqual(['status']);
  });
});

describe('status pages and services', () => {
  it('description at most 500; url a subdomain; theme colours only colours', () => {
    const page = { name: 'Acme', url: 'acme' };
    expect(keysOf(() => parse(StatusPageCreateSchema, { ...page, description: 'x'.repeat(500) }))).toEqual([]);
    expect(keysOf(() => parse(StatusPageCreateSchema, { ...page, description: 'x'.repeat(501) }))).toEqual(['description']);
    expect(keysOf(() => parse(StatusPageCreateSchema, { ...page, url: 'a b' }))).toEqual(['url']);
    expect(keysOf(() => parse(StatusPageCreateSchema, { ...page, themeColors: { dark: { bodyFontColor: 'red;}body{x:y' } } }))).toEqual(['themeColors.dark.bodyFontColor']);
    expect(parse(StatusPageCreateSchema, { ...page, themeColors: { light: { bodyBackgroundColor: '#fff' } } })).toMatchObject({
      defaultTheme: 'AUTO', whiteLabel: false, isPrivate: false, cards: [], themeColors: { light: { bodyBackgroundColor: '#fff' }, dark: {} },
    });
  });

  it('services: name required, lists paginated by default with limit 1..100 (default 20)', () => {
    expect(keysOf(() => parse(ServiceCreateSchema, {}))).toEqual(['name']);
    expect(parse(ServiceListQuerySchema, {})).toEqual({ limit: 20, paginated: true });
    expect(parse(ServiceListQuerySchema, { limit: '100', paginated: 'false' })).toEqual({ limit: 100, paginated: false });
    expect(keysOf(() => parse(ServiceListQuerySchema, { limit: '0' }))).toEqual(['limit']);
    expect(keysOf(() => parse(ServiceListQuerySchema, { limit: '101' }))).toEqual(['limit']);
    expect(keysOf(() => parse(StatusPageIncidentCreateSchema, { name: 'x', serviceIds: [], incidentUpdate: { description: 'd' } }))).toEqual(['serviceIds']);
  });
});

describe('client certificates and error groups', () => {
  it('host may start with *.; cert must be PEM; key and passphrase optional', () => {
    const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    expect(parse(ClientCertificateCreateSchema, { host: '*.Example.com', cert })).toEqual({ host: '*.example.com', cert, ca: null, key: null, passphrase: null });
    expect(keysOf(() => parse(ClientCertificateCreateSchema, { host: 'https://x.com', cert: 'nope', key: 'nope' }))).toEqual(['host', 'cert', 'key']);
  });

  it('a patch sets at least one flag', () => {
    expect(parse(ErrorGroupPatchSchema, { archiveForEver: true })).toEqual({ archiveForEver: true });
    expect(() => parse(ErrorGroupPatchSchema, {})).toThrow(ValidationError);
  });
});
