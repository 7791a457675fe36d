import { describe, expect, it } from 'vitest';
import { ValidationError } from '../src/errors.js';
import { ClientCertificateCreateSchema } from '../src/model/client-certificate.js';
import { DashboardCreateSchema, DashboardUpdateSchema } from '../src/model/dashboard.js';
import { ErrorGroupPatchSchema, ErrorGroupSchema } from '../src/model/error-group.js';
import { IncidentCreateSchema, IncidentUpdateCreateSchema, IncidentUpdateSchema } from '../src/model/incident.js';
import { MaintenanceWindowCreateSchema, MaintenanceWindowUpdateSchema } from '../src/model/maintenance-window.js';
import { parse } from '../src/model/parse.js';
import {
  ServiceCreateSchema,
  ServiceListQuerySchema,
  StatusPageCreateSchema,
  StatusPageIncidentCreateSchema,
  StatusPageIncidentUpdateCreateSchema,
  StatusPageUpdateSchema,
} from '../src/model/status-page.js';
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

  it('create requires name, startsAt, endsAt and repeatUnit; unknown fields are dropped', () => {
    expect(keysOf(() => parse(MaintenanceWindowCreateSchema, {}))).toEqual(['name', 'startsAt', 'endsAt', 'repeatUnit']);
    expect(parse(MaintenanceWindowCreateSchema, { ...window, id: 9, owner: 'x' })).not.toHaveProperty('owner');
    expect(parse(MaintenanceWindowCreateSchema, { ...window, id: 9 })).not.toHaveProperty('id');
    expect(keysOf(() => parse(MaintenanceWindowCreateSchema, { ...window, repeatEndsAt: window.startsAt }))).toEqual([]);
    expect(keysOf(() => parse(MaintenanceWindowCreateSchema, { ...window, repeatUnit: 'DAY', repeatInterval: null }))).toEqual([]);
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
    [{ paginationRate: 120 }, ['paginationRate']], [{ refreshRate: 600 }, []], [{ width: '960PX' }, []], [{ checksPerPage: 1.5 }, ['checksPerPage']],
    [{ customCSS: 'x'.repeat(50_000) }, []], [{ customCSS: 'x'.repeat(50_001) }, ['customCSS']], [{ customCSS: null }, []],
    [{ link: 'https://example.com/' }, []], [{ logo: 'not a url' }, ['logo']], [{ favicon: 'ftp://example.com/x.ico' }, ['favicon']], [{ useTagsAndOperator: null }, []],
    [{ customUrl: '-board' }, ['customUrl']], [{ customUrl: 'a'.repeat(63) }, []], [{ customUrl: 'a'.repeat(64) }, ['customUrl']],
  ])('%j names %j', (change, keys) => {
    expect(keysOf(() => parse(DashboardCreateSchema, { header: 'Ops', ...change }))).toEqual(keys);
  });

  it('customUrl is stored lower-case; an update has no defaults', () => {
    expect(parse(DashboardCreateSchema, { header: 'x', customUrl: 'My-Board' }).customUrl).toBe('my-board');
    expect(parse(DashboardUpdateSchema, {})).toEqual({});
    expect(parse(DashboardUpdateSchema, { header: 'New', width: '960PX' })).toEqual({ header: 'New', width: '960PX' });
    expect(keysOf(() => parse(DashboardUpdateSchema, { refreshRate: 1 }))).toEqual(['refreshRate']);
  });

  it('header is required on create; unknown fields are dropped', () => {
    expect(keysOf(() => parse(DashboardCreateSchema, {}))).toEqual(['header']);
    const got = parse(DashboardCreateSchema, { header: 'Ops', dashboardId: 'x', keys: [] });
    expect(got).not.toHaveProperty('dashboardId');
    expect(got).not.toHaveProperty('keys');
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
    expect(keysOf(() => parse(IncidentUpdateCreateSchema, {}))).toEqual(['status', 'description']);
  });

  it('create takes startedAt/stoppedAt as date-times or null; PUT has no required field', () => {
    const created = parse(IncidentCreateSchema, {
      name: 'x', dashboardId: 1, incidentUpdates: [update], startedAt: '2026-05-01T10:00:00+02:00', stoppedAt: null, extra: true,
    });
    expect(keysOf(() => parse(IncidentCreateSchema, { name: 'x', dashboardId: 0, incidentUpdates: [update] }))).toEqual(['dashboardId']);
    expect(created).toEqual({
      name: 'x', impact: 'MINOR', dashboardId: 1, incidentUpdates: [update], startedAt: '2026-05-01T08:00:00.000Z', stoppedAt: null,
    });
    expect(parse(IncidentUpdateSchema, {})).toEqual({});
    expect(parse(IncidentUpdateSchema, { impact: 'MAJOR', stoppedAt: '2026-05-01' })).toEqual({ impact: 'MAJOR', stoppedAt: '2026-05-01T00:00:00.000Z' });
    expect(keysOf(() => parse(IncidentUpdateSchema, { impact: 'minor', name: '' }))).toEqual(['name', 'impact']);
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

  it.each([
    ['#abc'], ['#abcd'], ['#a1b2c3'], ['#a1b2c3d4'], ['rgb(1, 2, 3)'], ['rgba(1 2 3 / 50%)'], ['hsl(120, 50%, 50%)'], ['transparent'],
  ])('theme colour %s is accepted', (color) => {
    expect(keysOf(() => parse(StatusPageCreateSchema, { name: 'A', url: 'a', themeColors: { light: { linkFontColor: color } } }))).toEqual([]);
  });

  it.each([['#abcde'], ['#ggg'], ['rgb(1,2,3);'], ['url(x)'], ['red}'], ['<b>']])('theme colour %s is refused', (color) => {
    expect(keysOf(() => parse(StatusPageCreateSchema, { name: 'A', url: 'a', themeColors: { light: { borderColor: color } } }))).toEqual([
      'themeColors.light.borderColor',
    ]);
  });

  it('status page: name and url required, every default filled, unknown fields dropped', () => {
    expect(keysOf(() => parse(StatusPageCreateSchema, {}))).toEqual(['name', 'url']);
    expect(keysOf(() => parse(StatusPageCreateSchema, { name: 'A', url: 'a', defaultTheme: 'SEPIA' }))).toEqual(['defaultTheme']);
    expect(parse(StatusPageCreateSchema, { name: 'A', url: 'Acme', id: 'x', themeColors: { light: { bogus: 'x' } } })).toEqual({
      name: 'A', url: 'acme', description: null, customDomain: null, themeColors: { light: {}, dark: {} }, logo: null, redirectTo: null,
      favicon: null, defaultTheme: 'AUTO', cards: [], whiteLabel: false, isPrivate: false,
    });
    expect(parse(StatusPageCreateSchema, { name: 'A', url: 'a', cards: [{ name: 'API' }] }).cards).toEqual([{ name: 'API', serviceIds: [] }]);
    expect(keysOf(() => parse(StatusPageCreateSchema, { name: 'A', url: 'a', cards: [{ serviceIds: [1] }] }))).toEqual([
      'cards.0.name', 'cards.0.serviceIds.0',
    ]);
    expect(parse(StatusPageUpdateSchema, { defaultTheme: 'DARK' })).toEqual({ defaultTheme: 'DARK' });
  });

  it('status-page incidents: an update with a description; notifySubscribers defaults to false', () => {
    expect(keysOf(() => parse(StatusPageIncidentCreateSchema, {}))).toEqual(['name', 'serviceIds', 'incidentUpdate']);
    expect(parse(StatusPageIncidentCreateSchema, { name: 'x', serviceIds: ['s1'], incidentUpdate: { description: 'd' } })).toEqual({
      name: 'x', serviceIds: ['s1'], incidentUpdate: { description: 'd', notifySubscribers: false },
    });
    expect(parse(StatusPageIncidentUpdateCreateSchema, { description: 'd', notifySubscribers: true, publicIncidentUpdateDate: '2026-05-01' })).toEqual({
      description: 'd', notifySubscribers: true, publicIncidentUpdateDate: '2026-05-01T00:00:00.000Z',
    });
    expect(keysOf(() => parse(StatusPageIncidentUpdateCreateSchema, { description: '', publicIncidentUpdateDate: 'later' }))).toEqual([
      'description', 'publicIncidentUpdateDate',
    ]);
  });

  it('services: name required, lists paginated by default with limit 1..100 (default 20)', () => {
    expect(keysOf(() => parse(ServiceCreateSchema, {}))).toEqual(['name']);
    expect(keysOf(() => parse(ServiceCreateSchema, { name: 'x'.repeat(200) }))).toEqual([]);
    expect(keysOf(() => parse(ServiceCreateSchema, { name: 'x'.repeat(201) }))).toEqual(['name']);
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
    expect(keysOf(() => parse(ClientCertificateCreateSchema, {}))).toEqual(['host', 'cert']);
    for (const host of ['x.com:443', 'x.com/path', '*.', 'a.*.com', '-x.com']) {
      expect(keysOf(() => parse(ClientCertificateCreateSchema, { host, cert }))).toEqual(['host']);
    }
    const key = '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n-----END ENCRYPTED PRIVATE KEY-----';
    expect(parse(ClientCertificateCreateSchema, { host: 'api.example.com', cert, ca: cert, key, passphrase: 'pw', id: 'x' })).toEqual({
      host: 'api.example.com', cert, ca: cert, key, passphrase: 'pw',
    });
    expect(keysOf(() => parse(ClientCertificateCreateSchema, { host: 'a.b', cert, ca: key }))).toEqual(['ca']);
  });

  it('a patch sets at least one flag', () => {
    expect(parse(ErrorGroupPatchSchema, { archiveForEver: true })).toEqual({ archiveForEver: true });
    expect(parse(ErrorGroupPatchSchema, { archivedUntilNextEvent: false, checkId: 'x' })).toEqual({ archivedUntilNextEvent: false });
    expect(() => parse(ErrorGroupPatchSchema, {})).toThrow(ValidationError);
    expect(keysOf(() => parse(ErrorGroupPatchSchema, { archiveForEver: 'yes' }))).toEqual(['archiveForEver']);
  });

  it('a stored error group without analyses reads as an empty list', () => {
    const group = {
      id: 'g', accountId: 'a', checkId: 'c', errorHash: 'h', rawErrorMessage: null, cleanedErrorMessage: 'm',
      firstSeen: '2026-05-01T00:00:00.000Z', lastSeen: '2026-05-01T00:00:00.000Z', archivedUntilNextEvent: false, archivedForever: false,
    };
    expect(parse(ErrorGroupSchema, group).rootCauseAnalyses).toEqual([]);
  });
});
