import type { ClientCertificate } from '../model/client-certificate.js';
import type { Dashboard } from '../model/dashboard.js';
import type { Incident } from '../model/incident.js';
import type { MaintenanceWindow } from '../model/maintenance-window.js';
import type { Snippet } from '../model/snippet.js';
import type { Service, StatusPage, StatusPageIncident, StatusPageSubscriber } from '../model/status-page.js';
import {
  clientCertificateFixture,
  dashboardFixture,
  incidentFixture,
  incidentUpdateFixture,
  maintenanceWindowFixture,
  serviceFixture,
  snippetFixture,
  statusPageFixture,
  statusPageIncidentFixture,
  statusPageIncidentUpdateFixture,
  statusPageSubscriberFixture,
} from './fixtures.js';
import { repositoryCases } from './storage-suite-repository.js';
import { UNICODE_TEXT } from './storage-suite-resources.js';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  checkRawCount,
  checkRejects,
  checkSame,
  isoAt,
  rawMatching,
  rawRows,
  type StorageCase,
} from './storage-suite-support.js';
import { check } from './suite-types.js';

const T0 = '2026-05-01T12:00:00.000Z';

export function pageCases(c: StorageCase) {
  repositoryCases<Dashboard>(c, {
    label: 'dashboards',
    table: 'dashboards',
    repo: (s) => s.dashboards,
    make: (marker) => dashboardFixture({ header: `Board ${marker}` }),
    change: (row, marker) => ({ ...row, header: `Board ${marker}`, refreshRate: 600 }),
    rich: (record) => ({
      ...record,
      header: UNICODE_TEXT,
      description: null,
      tags: [],
      customCSS: '.a::before { content: "\\201C"; }',
      checksPerPage: null,
      keys: [{ id: 'key-1', encryptedKey: 'v1:abc', maskedKey: 'dk_****1234', created_at: T0, updated_at: null }],
    }),
  });
  repositoryCases<MaintenanceWindow>(c, {
    label: 'maintenance windows',
    table: 'maintenance_windows',
    repo: (s) => s.maintenanceWindows,
    make: (marker) => maintenanceWindowFixture({ name: `Window ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Window ${marker}`, silenceAllAlerts: !row.silenceAllAlerts }),
    rich: (record) => ({ ...record, name: UNICODE_TEXT, tags: [], silenceAlertsTags: ['db', 'ü'], repeatInterval: null, repeatEndsAt: null }),
  });
  c('maintenance windows: listInForce leaves out the windows whose repeats have ended', async (f) => {
    const windows = f.storage.maintenanceWindows;
    if (!windows.listInForce) return;
    const add = (accountId: string, fields: Partial<MaintenanceWindow>) => windows.insert(accountId, maintenanceWindowFixture(fields));
    // The fixture: 01:00-03:00 UTC on 2026-05-02, every week.
    const forEver = await add(ACCOUNT_A, { repeatEndsAt: null });
    const once = await add(ACCOUNT_A, { repeatEndsAt: '2026-05-02T01:00:00.000Z' });
    const fourWeeks = await add(ACCOUNT_A, { repeatEndsAt: '2026-05-23T02:00:00.000Z' });
    await add(ACCOUNT_B, { repeatEndsAt: null });
    const ids = async (at: string) => (await windows.listInForce!(ACCOUNT_A, new Date(at))).map((w) => w.id);
    checkSame(await ids('2026-05-01T00:00:00.000Z'), [forEver.id, once.id, fourWeeks.id], 'before any starts, in creation order');
    checkSame(await ids('2026-05-02T02:59:59.999Z'), [forEver.id, once.id, fourWeeks.id], 'during the first occurrence');
    checkSame(await ids('2026-05-02T03:00:00.000Z'), [forEver.id, fourWeeks.id], 'the one-off is over at its end');
    checkSame(await ids('2026-05-23T02:59:59.999Z'), [forEver.id, fourWeeks.id], 'during the last occurrence');
    checkSame(await ids('2026-05-23T03:00:00.000Z'), [forEver.id], 'only the one that repeats for ever');
    const { accountId: _a, ...rest } = once;
    await windows.update(ACCOUNT_A, once.id, { ...rest, repeatEndsAt: null });
    checkSame(await ids('2030-01-01T00:00:00.000Z'), [forEver.id, once.id], 'a window made to repeat for ever again');
  });
  repositoryCases<Snippet>(c, {
    label: 'snippets',
    table: 'snippets',
    repo: (s) => s.snippets,
    make: (marker) => snippetFixture({ name: `Snippet ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Snippet ${marker}`, script: 'await fetch("http://127.0.0.1/");\nrequest.body = "\\u201C";' }),
    rich: (record) => ({ ...record, name: UNICODE_TEXT, script: `const s = \`\${process.env.KEY}\`; // "quotes" \\ and ${UNICODE_TEXT}` }),
  });
  repositoryCases<Incident>(c, {
    label: 'incidents',
    table: 'incidents',
    repo: (s) => s.incidents,
    make: (marker) => incidentFixture(1, { name: `Incident ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Incident ${marker}`, stoppedAt: isoAt(T0, 60_000) }),
    rich: (record) => ({ ...record, name: UNICODE_TEXT, startedAt: null, stoppedAt: null }),
  });
  repositoryCases<StatusPage>(c, {
    label: 'status pages',
    table: 'status_pages',
    repo: (s) => s.statusPages,
    make: (marker) => statusPageFixture({ name: `Page ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Page ${marker}`, defaultTheme: 'DARK' }),
    rich: (record) => ({
      ...record,
      name: UNICODE_TEXT,
      description: null,
      themeColors: { light: {}, dark: { bodyBackgroundColor: '#000000' } },
      cards: [{ id: 'card-1', name: UNICODE_TEXT, serviceIds: [], created_at: T0, updated_at: null }],
    }),
  });
  repositoryCases<Service>(c, {
    label: 'services',
    table: 'services',
    repo: (s) => s.services,
    make: (marker) => serviceFixture({ name: `Service ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Service ${marker}`, updated_at: isoAt(T0, 1000) }),
  });
  repositoryCases<StatusPageIncident>(c, {
    label: 'status-page incidents',
    table: 'status_page_incidents',
    repo: (s) => s.statusPageIncidents,
    make: (marker) => statusPageIncidentFixture({ name: `Outage ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Outage ${marker}`, updated_at: isoAt(T0, 1000) }),
  });

  repositoryCases<StatusPageSubscriber>(c, {
    label: 'status-page subscribers',
    table: 'status_page_subscribers',
    repo: (s) => s.statusPageSubscribers,
    make: (marker) => statusPageSubscriberFixture({ email: `${marker}@example.com` }),
    change: (row, marker) => ({ ...row, email: `${marker}@example.com`, confirmed: true, confirmedAt: isoAt(T0, 1000), updated_at: isoAt(T0, 1000) }),
  });

  c('status-page subscribers: by page with a cursor, by address and by token; one address per page; another account sees nothing', async (f) => {
    const subs = f.storage.statusPageSubscribers;
    const page = statusPageFixture().id;
    const other = statusPageFixture().id;
    const rows: StatusPageSubscriber[] = [];
    for (let i = 0; i < 5; i++) rows.push(await subs.insert(ACCOUNT_A, statusPageSubscriberFixture({ statusPageId: page, email: `s${i}@example.com` })));
    const elsewhere = await subs.insert(ACCOUNT_A, statusPageSubscriberFixture({ statusPageId: other, email: 's0@example.com' }));
    const first = await subs.listByPage(ACCOUNT_A, page, null, 2);
    const rest = await subs.listByPage(ACCOUNT_A, page, first.at(-1)!.id, 10);
    check(first.length === 2 && rest.length === 3, `pages of 2 and then the other 3, got ${first.length} and ${rest.length}`);
    checkSame([...first, ...rest].map((r) => r.id).sort(), rows.map((r) => r.id).sort(), 'the two pages hold each of the page\'s subscribers once');
    // The cursor's row leaves: the listing goes on after where it was.
    await subs.delete(ACCOUNT_A, rest[0]!.id);
    checkSame(await subs.listByPage(ACCOUNT_A, page, rest[0]!.id, 10), rest.slice(1), 'a cursor whose row was deleted still reads the rows after it');
    checkSame(await subs.listByPage(ACCOUNT_A, page, 'no\u0000such', 10), [], 'a cursor with a NUL reads nothing');
    check((await subs.countByPage(ACCOUNT_A, page)) === 4, 'the page counts its own four');
    const kept = rows.find((r) => r.id !== rest[0]!.id && r.email === 's3@example.com') ?? null;
    checkSame(await subs.findByEmail(ACCOUNT_A, page, 's3@example.com'), kept, 'found by address');
    check((await subs.findByEmail(ACCOUNT_A, page, 'S3@example.com')) === null, 'addresses are stored as given (the service lower-cases them)');
    checkSame(await subs.findByTokenHash(first[0]!.tokenHash), first[0], 'found by token, whatever the account');
    check((await subs.findByTokenHash('0'.repeat(64))) === null, 'an unknown token finds nobody');
    await checkRejects(() => subs.insert(ACCOUNT_A, statusPageSubscriberFixture({ statusPageId: other, email: 's0@example.com' })), 'CONFLICT', 'a second subscription of an address to a page');
    await checkRejects(() => subs.insert(ACCOUNT_A, statusPageSubscriberFixture({ tokenHash: first[0]!.tokenHash })), 'CONFLICT', 'a token hash taken already');
    check((await subs.countByPage(ACCOUNT_A, other)) === 1, 'a refused insert stores nothing');

    checkSame(await subs.listByPage(ACCOUNT_B, page, null, 10), [], 'another account lists none of them');
    check((await subs.countByPage(ACCOUNT_B, page)) === 0, 'another account counts none');
    check((await subs.findByEmail(ACCOUNT_B, page, 's0@example.com')) === null, 'another account finds none by address');
    check((await subs.deleteByPage(ACCOUNT_B, page)) === 0, 'another account deletes none');
    check((await subs.deleteByPage(ACCOUNT_A, page)) === 4, 'deleting the page\'s subscribers takes its four');
    checkSame(await subs.listByPage(ACCOUNT_A, other, null, 10), [elsewhere], 'and leaves the other page\'s');
  });

  c('status-page subscribers: pending ones counted by address across accounts, and pruned by age', async (f) => {
    const subs = f.storage.statusPageSubscribers;
    const page = statusPageFixture().id;
    const pending = (accountId: string, statusPageId: string, email: string, sentAt: string | null, confirmed = false) =>
      subs.insert(accountId, statusPageSubscriberFixture({ statusPageId, email, confirmed, confirmationSentAt: sentAt }));
    await pending(ACCOUNT_A, page, 'ana@example.com', isoAt(T0, 0));
    await pending(ACCOUNT_B, statusPageFixture().id, 'ana@example.com', isoAt(T0, 60_000));
    await pending(ACCOUNT_A, statusPageFixture().id, 'ana@example.com', isoAt(T0, -3_600_000));
    await pending(ACCOUNT_A, statusPageFixture().id, 'ana@example.com', isoAt(T0, 120_000), true);
    const old = await pending(ACCOUNT_A, page, 'bo@example.com', isoAt(T0, -3_600_000));
    const never = await pending(ACCOUNT_A, page, 'cy@example.com', null);
    const confirmedOld = await pending(ACCOUNT_A, page, 'di@example.com', isoAt(T0, -3_600_000), true);
    check((await subs.countPendingByEmail('ana@example.com', T0)) === 2, 'the unconfirmed ones sent since, in both accounts');
    check((await subs.countPendingByEmail('ana@example.com', isoAt(T0, -7_200_000))) === 3, 'and the older one with an earlier bound');
    check((await subs.countPendingByEmail('ed@example.com', T0)) === 0, 'another address counts none');
    check((await subs.countPendingByAccount(ACCOUNT_A, T0)) === 1, 'the account\'s unconfirmed ones sent since, not the confirmed one nor the other account\'s');
    check((await subs.countPendingByAccount(ACCOUNT_A, isoAt(T0, -7_200_000))) === 3, 'and the older ones with an earlier bound');
    check((await subs.countPendingByAccount(ACCOUNT_B, T0)) === 1, 'the other account counts its own');
    check((await subs.deletePending(ACCOUNT_B, page, T0)) === 0, 'another account prunes none of the page\'s');
    check((await subs.deletePending(ACCOUNT_A, page, T0)) === 2, 'the page\'s unconfirmed ones sent before go, and one never sent');
    check((await subs.get(ACCOUNT_A, old.id)) === null && (await subs.get(ACCOUNT_A, never.id)) === null, 'those two are gone');
    check((await subs.get(ACCOUNT_A, confirmedOld.id)) !== null, 'a confirmed one stays, however old');
    check((await subs.countByPage(ACCOUNT_A, page)) === 2, 'the page keeps its recent pending one and the confirmed one');
  });

  c('client certificates: insert, get, list, delete; another account sees nothing', async (f) => {
    const certs = f.storage.clientCertificates;
    const record = clientCertificateFixture({ host: '*.mark-cert.example.com', encryptedPassphrase: null });
    const inserted = await certs.insert(ACCOUNT_A, record);
    checkSame(inserted, { ...record, accountId: ACCOUNT_A }, 'insert answers the certificate');
    await checkRejects(() => certs.insert(ACCOUNT_B, record), 'CONFLICT', 'a second insert of a certificate id');
    checkSame(await certs.get(ACCOUNT_A, record.id), inserted, 'get answers it');
    const second: ClientCertificate = await certs.insert(ACCOUNT_A, clientCertificateFixture());
    const page = await certs.list(ACCOUNT_A, { limit: 1, offset: 1 });
    checkSame(page.items, [second], 'list pages in creation order');
    check(page.total === 2, 'list counts this account\'s certificates');
    check((await certs.get(ACCOUNT_B, record.id)) === null, 'another account cannot read it');
    check((await certs.delete(ACCOUNT_B, record.id)) === false, 'another account cannot delete it');
    check((await certs.list(ACCOUNT_B)).total === 0, 'another account lists none');
    check((await certs.delete(ACCOUNT_A, record.id)) === true, 'the owner deletes it');
    check((await rawMatching(f.raw, 'client_certificates', 'mark-cert')).length === 0, 'the raw row is gone');
    await checkRawCount(f.raw, 'client_certificates', 1, 'the other certificate stays');
  });

  c('client certificates: listByHosts gives this account\'s of those hosts, in creation order', async (f) => {
    const certs = f.storage.clientCertificates;
    if (!certs.listByHosts) return;
    const wild = await certs.insert(ACCOUNT_A, clientCertificateFixture({ host: '*.example.com' }));
    await certs.insert(ACCOUNT_A, clientCertificateFixture({ host: 'db.example.com' }));
    const exact = await certs.insert(ACCOUNT_A, clientCertificateFixture({ host: 'api.example.com' }));
    const again = await certs.insert(ACCOUNT_A, clientCertificateFixture({ host: 'api.example.com' }));
    await certs.insert(ACCOUNT_B, clientCertificateFixture({ host: 'api.example.com' }));
    checkSame((await certs.listByHosts(ACCOUNT_A, ['api.example.com', '*.example.com'])).map((c) => c.id), [wild.id, exact.id, again.id], 'both hosts, in creation order');
    checkSame(await certs.listByHosts(ACCOUNT_A, ['shop.example.org']), [], 'a host with none');
    checkSame((await certs.listByHosts(ACCOUNT_A, ['api.example.com']))[0], exact, 'a certificate as stored');
  });

  c('dashboards: customUrl is unique across accounts; findByCustomUrl and findByCustomDomain', async (f) => {
    const boards = f.storage.dashboards;
    const mine = await boards.insert(ACCOUNT_A, dashboardFixture({ customUrl: 'status-acme', customDomain: 'status.acme.example' }));
    await checkRejects(() => boards.insert(ACCOUNT_B, dashboardFixture({ customUrl: 'status-acme' })), 'CONFLICT', 'a taken customUrl in another account');
    const other = await boards.insert(ACCOUNT_B, dashboardFixture({ customUrl: 'status-other' }));
    await checkRejects(() => boards.update(ACCOUNT_B, other.id, { ...other, customUrl: 'status-acme' }), 'CONFLICT', 'updating to a taken customUrl');
    checkSame(await boards.update(ACCOUNT_A, mine.id, { ...mine, header: 'same url' }), { ...mine, header: 'same url' }, 'a row may keep its own customUrl');
    check((await boards.findByCustomUrl('status-acme'))?.id === mine.id, 'findByCustomUrl finds it from anywhere');
    check((await boards.findByCustomDomain('status.acme.example'))?.id === mine.id, 'findByCustomDomain finds it');
    check((await boards.findByCustomUrl('nope')) === null && (await boards.findByCustomDomain('nope.example')) === null, 'unknown values find nothing');
    await checkRawCount(f.raw, 'dashboards', 2, 'the conflicts stored nothing');
  });

  c('status pages: url is unique across accounts; findByUrl', async (f) => {
    const pages = f.storage.statusPages;
    const mine = await pages.insert(ACCOUNT_A, statusPageFixture({ url: 'acme' }));
    await checkRejects(() => pages.insert(ACCOUNT_B, statusPageFixture({ url: 'acme' })), 'CONFLICT', 'a taken url');
    const other = await pages.insert(ACCOUNT_B, statusPageFixture({ url: 'other' }));
    await checkRejects(() => pages.update(ACCOUNT_B, other.id, { ...other, url: 'acme' }), 'CONFLICT', 'updating to a taken url');
    checkSame(await pages.findByUrl('acme'), mine, 'findByUrl finds it from anywhere');
    check((await pages.findByUrl('nope')) === null, 'an unknown url finds nothing');
    checkSame(await pages.findAnywhere(mine.id), mine, 'findAnywhere finds it by id from anywhere');
    check((await pages.findAnywhere('nope')) === null, 'an unknown id finds nothing');
  });

  c('incidents: listCurrentByDashboard leaves out those stopped before a time', async (f) => {
    const incidents = f.storage.incidents;
    if (!incidents.listCurrentByDashboard) return;
    const since = new Date(Date.parse(T0) + 10_000);
    const open = await incidents.insert(ACCOUNT_A, incidentFixture(1));
    const stoppedBefore = await incidents.insert(ACCOUNT_A, incidentFixture(1, { stoppedAt: isoAt(T0, 9_999) }));
    const stoppedAt = await incidents.insert(ACCOUNT_A, incidentFixture(1, { stoppedAt: isoAt(T0, 10_000) }));
    const stopsLater = await incidents.insert(ACCOUNT_A, incidentFixture(1, { startedAt: isoAt(T0, 50_000), stoppedAt: isoAt(T0, 60_000) }));
    await incidents.insert(ACCOUNT_A, incidentFixture(2));
    await incidents.insert(ACCOUNT_B, incidentFixture(1));
    const ids = async () => (await incidents.listCurrentByDashboard!(ACCOUNT_A, 1, since)).map((i) => i.id);
    checkSame(await ids(), [open.id, stoppedAt.id, stopsLater.id], 'open, or stopped at or after `since`, in creation order');
    const { accountId: _a, ...rest } = open;
    await incidents.update(ACCOUNT_A, open.id, { ...rest, stoppedAt: isoAt(T0, 0) });
    const { accountId: _b, ...again } = stoppedBefore;
    await incidents.update(ACCOUNT_A, stoppedBefore.id, { ...again, stoppedAt: null });
    checkSame(await ids(), [stoppedBefore.id, stoppedAt.id, stopsLater.id], 'one stopped since, one open again');
  });

  c('incidents: listByDashboard and updates, oldest first, in one account', async (f) => {
    const incidents = f.storage.incidents;
    const i1 = await incidents.insert(ACCOUNT_A, incidentFixture(1));
    const i2 = await incidents.insert(ACCOUNT_A, incidentFixture(2));
    await incidents.insert(ACCOUNT_B, incidentFixture(1));
    checkSame((await incidents.listByDashboard(ACCOUNT_A, 1)).map((i) => i.id), [i1.id], 'listByDashboard');
    const u1 = incidentUpdateFixture(i1.id, { status: 'INVESTIGATING', created_at: T0 });
    const u2 = incidentUpdateFixture(i1.id, { status: 'RESOLVED', description: UNICODE_TEXT, created_at: isoAt(T0, 1000) });
    const s1 = await incidents.insertUpdate(ACCOUNT_A, u1);
    checkSame(s1, { ...u1, id: s1.id, accountId: ACCOUNT_A }, 'insertUpdate answers the update');
    await incidents.insertUpdate(ACCOUNT_A, u2);
    await incidents.insertUpdate(ACCOUNT_A, incidentUpdateFixture(i2.id));
    checkSame((await incidents.listUpdates(ACCOUNT_A, i1.id)).map((u) => [u.status, u.description]), [['INVESTIGATING', u1.description], ['RESOLVED', UNICODE_TEXT]], 'listUpdates oldest first');
    check((await incidents.listUpdates(ACCOUNT_B, i1.id)).length === 0, 'another account lists no updates');
    const before = await rawRows(f.raw, 'incident_updates');
    await checkRejects(() => incidents.insertUpdate(ACCOUNT_B, incidentUpdateFixture(i1.id)), 'NOT_FOUND', 'an update to another account\'s incident');
    checkSame(await rawRows(f.raw, 'incident_updates'), before, 'the refused update stored nothing');
  });

  c('services: listAfter in creation order and listByIds', async (f) => {
    const services = f.storage.services;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await services.insert(ACCOUNT_A, serviceFixture())).id);
    const foreign = await services.insert(ACCOUNT_B, serviceFixture());
    checkSame((await services.listAfter(ACCOUNT_A, null, 2)).map((s) => s.id), ids.slice(0, 2), 'the first page');
    checkSame((await services.listAfter(ACCOUNT_A, ids[1]!, 2)).map((s) => s.id), ids.slice(2, 4), 'the page after a cursor');
    check((await services.listAfter(ACCOUNT_A, ids[3]!, 2)).length === 0, 'nothing after the last');
    checkSame((await services.listByIds(ACCOUNT_A, [ids[2]!, foreign.id, ids[0]!])).map((s) => s.id).sort(), [ids[0]!, ids[2]!].sort(), 'listByIds answers only this account\'s');
  });

  c('status-page incidents: listCurrent gives those open and those closed since, newest first', async (f) => {
    const incidents = f.storage.statusPageIncidents;
    if (!incidents.listCurrent) return;
    const since = new Date(Date.parse(T0) + 10_000);
    const add = (accountId: string, at: number, fields: Partial<StatusPageIncident>) =>
      incidents.insert(accountId, statusPageIncidentFixture({ created_at: isoAt(T0, at), ...fields }));
    const openOld = await add(ACCOUNT_A, 0, { status: 'INVESTIGATING', stoppedAt: null });
    const closedBefore = await add(ACCOUNT_A, 1000, { status: 'RESOLVED', stoppedAt: isoAt(T0, 5000) });
    const closedSince = await add(ACCOUNT_A, 2000, { status: 'RESOLVED', stoppedAt: isoAt(T0, 10_000) });
    const noStatus = await add(ACCOUNT_A, 3000, {});
    const resolvedNoTime = await add(ACCOUNT_A, 4000, { status: 'RESOLVED', stoppedAt: null });
    const maintenance = await add(ACCOUNT_A, 5000, { status: 'MAINTENANCE', stoppedAt: null });
    await add(ACCOUNT_B, 6000, { status: 'INVESTIGATING' });
    const current = async () => (await incidents.listCurrent!(ACCOUNT_A, since)).map((i) => i.id);
    checkSame(await current(), [maintenance, resolvedNoTime, noStatus, closedSince, openOld].map((i) => i.id), 'open, or closed at or after `since`, newest first');
    const { accountId: _a, ...rest } = openOld;
    await incidents.update(ACCOUNT_A, openOld.id, { ...rest, status: 'RESOLVED', stoppedAt: isoAt(T0, 9_999) });
    const { accountId: _b, ...again } = closedBefore;
    await incidents.update(ACCOUNT_A, closedBefore.id, { ...again, status: 'MONITORING', stoppedAt: null });
    checkSame(await current(), [maintenance, resolvedNoTime, noStatus, closedSince, closedBefore].map((i) => i.id), 'one resolved before `since`, one open again');
  });

  c('status-page incidents: listAfter newest first and updates', async (f) => {
    const incidents = f.storage.statusPageIncidents;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await incidents.insert(ACCOUNT_A, statusPageIncidentFixture({ created_at: isoAt(T0, i * 1000) }))).id);
    await incidents.insert(ACCOUNT_B, statusPageIncidentFixture({ created_at: isoAt(T0, 9000) }));
    checkSame((await incidents.listAfter(ACCOUNT_A, null, 2)).map((i) => i.id), [ids[2], ids[1]], 'newest first');
    checkSame((await incidents.listAfter(ACCOUNT_A, ids[1]!, 2)).map((i) => i.id), [ids[0]], 'after a cursor');
    const update = statusPageIncidentUpdateFixture(ids[0]!, { description: UNICODE_TEXT });
    const stored = await incidents.insertUpdate(ACCOUNT_A, update);
    checkSame(stored, { ...update, id: stored.id, accountId: ACCOUNT_A }, 'insertUpdate answers the update');
    checkSame(await incidents.listUpdates(ACCOUNT_A, ids[0]!), [stored], 'listUpdates');
    check((await incidents.listUpdates(ACCOUNT_B, ids[0]!)).length === 0, 'another account lists no updates');
    await checkRejects(() => incidents.insertUpdate(ACCOUNT_B, statusPageIncidentUpdateFixture(ids[0]!)), 'NOT_FOUND', 'an update to another account\'s incident');
  });
}
