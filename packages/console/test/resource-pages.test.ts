import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BACKENDS, consoleHarness, csrfOf, dropPostgresSchema, signedIn, type ConsoleHarness } from './support/harness.js';

let h: ConsoleHarness;
let hook: Server | undefined;
afterEach(async () => {
  await h?.close();
  if (hook) await new Promise((r) => hook!.close(r));
  hook = undefined;
});
afterAll(dropPostgresSchema);

/** A local webhook receiver: answers 200 and keeps each body. */
async function webhook(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  hook = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      bodies.push(text);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => hook!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`, bodies };
}

describe.each(BACKENDS)('console forms on %s', (backend) => {
  it('create a TCP check, refuse a bad port beside its field and save nothing, edit it, and delete it after asking', async () => {
    h = await consoleHarness(backend);
    const { agent, csrf } = await signedIn(h.app, h.a);
    const types = await agent.get('/console/checks/new');
    expect(types.text).toContain('href="/console/r/check-tcp/new"');
    const form = await agent.get('/console/r/check-tcp/new');
    expect(form.status).toBe(200);
    expect(form.text).toContain('name="request.port"');

    const bad = await agent.post('/console/r/check-tcp/new').type('form').send({ _csrf: csrf, name: 'orders-db', 'request.hostname': '127.0.0.1', 'request.port': '70000' });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/id="f-request\.port"[^>]*aria-invalid="true"/);
    expect(bad.text).toContain('id="f-request.port-error"');
    expect(bad.text).toContain('value="orders-db"');
    expect(await h.vigil.storage.checks.listAll(h.a.accountId)).toHaveLength(0);

    const made = await agent.post('/console/r/check-tcp/new').type('form').send({ _csrf: csrf, name: 'orders-db', 'request.hostname': '127.0.0.1', 'request.port': '5432', tags: 'db\nprod' });
    expect(made.status).toBe(303);
    const [check] = await h.vigil.storage.checks.listAll(h.a.accountId);
    expect(check).toMatchObject({ name: 'orders-db', checkType: 'TCP', request: { hostname: '127.0.0.1', port: 5432 }, tags: ['db', 'prod'] });
    expect(made.headers.location).toBe(`/console/checks/${check!.id}`);

    // The check page's edit link leads to the form of the check's type.
    const link = await agent.get(`/console/checks/${check!.id}/edit`);
    expect(link.status).toBe(302);
    expect(link.headers.location).toBe(`/console/r/check-tcp/${check!.id}/edit`);
    const edit = await agent.get(link.headers.location!);
    expect(edit.text).toContain('value="orders-db"');
    const posted = { _csrf: csrf, name: 'orders-db (primary)', 'request.hostname': '127.0.0.1', 'request.port': '5433' };
    expect((await agent.post(`/console/r/check-tcp/${check!.id}/edit`).type('form').send(posted)).status).toBe(303);
    expect(await h.vigil.storage.checks.get(h.a.accountId, check!.id)).toMatchObject({ name: 'orders-db (primary)', request: { port: 5433 } });

    // Another account's id answers 404 for the form, the save and the delete, and changes nothing.
    const other = await h.vigil.checks.create(h.b.accountId, 'TCP', { name: 'b-db', request: { hostname: '127.0.0.1', port: 1 } });
    expect((await agent.get(`/console/r/check-tcp/${other.id}/edit`)).status).toBe(404);
    expect((await agent.post(`/console/r/check-tcp/${other.id}/edit`).type('form').send({ ...posted, name: 'taken' })).status).toBe(404);
    expect((await agent.post(`/console/r/check-tcp/${other.id}/delete`).type('form').send({ _csrf: csrf })).status).toBe(404);
    expect(await h.vigil.storage.checks.get(h.b.accountId, other.id)).toMatchObject({ name: 'b-db' });

    // A form without its token changes nothing.
    const forged = await agent.post(`/console/r/check-tcp/${check!.id}/delete`).type('form').send({});
    expect(forged.status).toBe(403);
    expect(await h.vigil.storage.checks.get(h.a.accountId, check!.id)).not.toBeNull();

    const ask = await agent.get(`/console/r/check-tcp/${check!.id}/delete`);
    expect(ask.text).toContain('Delete orders-db (primary)?');
    const gone = await agent.post(`/console/r/check-tcp/${check!.id}/delete`).type('form').send({ _csrf: csrfOf(ask.text) });
    expect(gone.status).toBe(303);
    expect(await h.vigil.storage.checks.get(h.a.accountId, check!.id)).toBeNull();
  });

  it('make a check group and a webhook channel, and send the channel a test alert that arrives', async () => {
    h = await consoleHarness(backend);
    const receiver = await webhook();
    const { agent, csrf } = await signedIn(h.app, h.a);
    expect((await agent.post('/console/r/check-group/new').type('form').send({ _csrf: csrf, name: 'Payments' })).status).toBe(303);
    const groups = await agent.get('/console/groups');
    expect(groups.text).toContain('Payments');

    const channels = await agent.get('/console/alert-channels');
    expect(channels.text).toContain('href="/console/r/alert-channel-webhook/new"');
    const made = await agent.post('/console/r/alert-channel-webhook/new').type('form').send({
      _csrf: csrf, type: 'WEBHOOK', 'config.name': 'ops hook', 'config.url': receiver.url, 'config.method': 'POST',
    });
    expect(made.status, made.text.slice(0, 2000)).toBe(303);
    const [channel] = (await h.vigil.alertChannels.list(h.a.accountId, {})).items;
    expect(channel).toMatchObject({ type: 'WEBHOOK' });
    const list = await agent.get('/console/alert-channels');
    expect(list.text).toContain(`action="/console/r/alert-channel-webhook/${channel!.id}/test"`);
    const sent = await agent.post(`/console/r/alert-channel-webhook/${channel!.id}/test`).type('form').send({ _csrf: csrf });
    expect(sent.status, sent.text.slice(0, 500)).toBe(303);
    expect(receiver.bodies).toHaveLength(1);
    // A failed test alert says why.
    const down = await h.vigil.alertChannels.create(h.a.accountId, { type: 'WEBHOOK', config: { name: 'down', url: 'http://127.0.0.1:1/hook', method: 'POST' } });
    const failed = await agent.post(`/console/r/alert-channel-webhook/${down.id}/test`).type('form').send({ _csrf: csrf });
    expect(failed.status).toBe(502);
    expect(failed.text).toContain('The test alert was not delivered');
    await h.vigil.alertChannels.delete(h.a.accountId, down.id);
    // Under another type's form the channel is not found: neither shown nor deleted.
    expect((await agent.get(`/console/r/alert-channel-email/${channel!.id}/edit`)).status).toBe(404);
    expect((await agent.post(`/console/r/alert-channel-email/${channel!.id}/delete`).type('form').send({ _csrf: csrf })).status).toBe(404);
    expect((await h.vigil.alertChannels.list(h.a.accountId, {})).items).toHaveLength(1);
  });
});
