import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { createVigil } from '../src/container.js';
import { TcpCheck } from '../src/constructs/checks.js';
import { ConstructValidationError } from '../src/services/apply-constructs.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { refused } from './refused.js';

// An id in a body that names another account's resource is refused with a 400 naming the field,
// as an id that does not exist is; the resource of the other account stays as it was.

async function twoAccounts() {
  const vigil = createVigil({ storage: memoryStorage(), secretKey: 'c'.repeat(64) });
  const a = (await vigil.accounts.ensure()).id;
  const b = (await vigil.accounts.ensure()).id;
  // B's resources, which A names.
  const service = await vigil.services.create(b, { name: 'B API' });
  const group = await vigil.checkGroups.create(b, { name: 'B group' });
  const channel = await vigil.alertChannels.create(b, { type: 'WEBHOOK', config: { name: 'B hook', url: 'https://hooks.example.com/b' } });
  const snippet = await vigil.snippets.create(b, { name: 'B setup', script: 'request.headers.x = "b";' });
  const check = await vigil.checks.create(b, 'TCP', tcp('b'));
  return { vigil, a, b, service, group, channel, snippet, check };
}

const tcp = (name: string, extra: Record<string, unknown> = {}) => ({ name, request: { hostname: 'db.example.com', port: 5432 }, ...extra });
const trigger = (serviceId: string) => ({ triggerIncident: { serviceId, name: 'Down', description: 'Looking into it.', notifySubscribers: false } });

describe('ids of another account in a body', () => {
  it('triggerIncident.serviceId: on check create and update, as an unknown id is', async () => {
    const s = await twoAccounts();
    await refused(s.vigil.checks.create(s.a, 'TCP', tcp('x', trigger(s.service.id))), 'triggerIncident.serviceId');
    await refused(s.vigil.checks.create(s.a, 'TCP', tcp('x', trigger('no-such-service'))), 'triggerIncident.serviceId');
    expect((await s.vigil.checks.list(s.a, {})).items).toEqual([]);
    const own = await s.vigil.services.create(s.a, { name: 'A API' });
    const check = await s.vigil.checks.create(s.a, 'TCP', tcp('x', trigger(own.id)));
    expect(check.triggerIncident?.serviceId).toBe(own.id);
    await refused(s.vigil.checks.update(s.a, check.id, trigger(s.service.id)), 'triggerIncident.serviceId');
    expect((await s.vigil.checks.get(s.a, check.id)).triggerIncident?.serviceId).toBe(own.id);
    // An update that leaves triggerIncident alone is not refused for it.
    expect((await s.vigil.checks.update(s.a, check.id, { name: 'renamed' })).name).toBe('renamed');
  });

  it('triggerIncident.serviceId: in checks as code, before anything is applied', async () => {
    const s = await twoAccounts();
    const construct = new TcpCheck('db', { ...tcp('db'), ...trigger(s.service.id) } as never);
    const err = await s.vigil.apply(s.a, [construct]).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ConstructValidationError);
    expect((err as ConstructValidationError).constructIssues.map((i) => i.path)).toEqual(['triggerIncident.serviceId']);
    expect((await s.vigil.checks.list(s.a, {})).items).toEqual([]);
  });

  it('groupId and alertChannelSubscriptions of a check', async () => {
    const s = await twoAccounts();
    await refused(s.vigil.checks.create(s.a, 'TCP', tcp('x', { groupId: s.group.id })), 'groupId');
    await refused(s.vigil.checks.create(s.a, 'TCP', tcp('x', { alertChannelSubscriptions: [{ alertChannelId: s.channel.id, activated: true }] })), 'alertChannelSubscriptions.0.alertChannelId');
    const check = await s.vigil.checks.create(s.a, 'TCP', tcp('x'));
    await refused(s.vigil.checks.update(s.a, check.id, { groupId: s.group.id }), 'groupId');
  });

  it('setupSnippetId, tearDownSnippetId and alertChannelSubscriptions of a group', async () => {
    const s = await twoAccounts();
    await refused(s.vigil.checkGroups.create(s.a, { name: 'g', setupSnippetId: s.snippet.id }), 'setupSnippetId');
    await refused(s.vigil.checkGroups.create(s.a, { name: 'g', tearDownSnippetId: s.snippet.id }), 'tearDownSnippetId');
    await refused(s.vigil.checkGroups.create(s.a, { name: 'g', alertChannelSubscriptions: [{ alertChannelId: s.channel.id, activated: true }] }), 'alertChannelSubscriptions.0.alertChannelId');
  });

  it("a channel's subscriptions name checks and groups of its own account", async () => {
    const s = await twoAccounts();
    const channel = await s.vigil.alertChannels.create(s.a, { type: 'WEBHOOK', config: { name: 'A hook', url: 'https://hooks.example.com/a' } });
    await refused(s.vigil.alertChannels.updateSubscriptions(s.a, channel.id, [{ checkId: s.check.id }]), '0.checkId');
    await refused(s.vigil.alertChannels.updateSubscriptions(s.a, channel.id, [{ groupId: s.group.id }]), '0.groupId');
  });

  it('status-page cards and incidents name services of their own account', async () => {
    const s = await twoAccounts();
    await refused(s.vigil.statusPages.create(s.a, { name: 'A', url: 'a-page', cards: [{ name: 'c', serviceIds: [s.service.id] }] }), 'cards.0.serviceIds');
    await refused(s.vigil.statusPageIncidents.create(s.a, { name: 'Down', serviceIds: [s.service.id], incidentUpdate: { description: 'Looking into it.' } }), 'serviceIds.0');
  });
});
