import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FakeRunner, settle } from '@vigil/core/testing';
import { BACKENDS, consoleHarness, dropPostgresSchema, signedIn, type ConsoleHarness } from './support/harness.js';

let h: ConsoleHarness;
afterEach(async () => {
  await h?.close();
});
afterAll(dropPostgresSchema);

const tcp = (name: string) => ({ name, request: { hostname: '127.0.0.1', port: 5432 } });

/** The engine's next steps: fake time moves a second, and the store's real I/O gets a few real turns. */
async function step(harness: ConsoleHarness): Promise<void> {
  harness.clock.advance(1_000);
  await settle();
  await new Promise<void>((resolve) => setTimeout(resolve, 5));
}

describe.each(BACKENDS)('a check\'s actions on %s', (backend) => {
  it('mute, unmute, deactivate and activate change the stored check; without the CSRF token nothing changes', async () => {
    h = await consoleHarness(backend);
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('orders-db'));
    const { agent, csrf } = await signedIn(h.app, h.a);
    const stored = () => h.vigil.checks.getRecord(h.a.accountId, check.id);
    const url = `/console/checks/${check.id}`;

    const forged = await agent.post(`${url}/mute`).type('form').send({});
    expect(forged.status).toBe(403);
    expect((await agent.post(`${url}/deactivate`).type('form').send({ _csrf: 'not-the-token' })).status).toBe(403);
    expect((await agent.post(`${url}/mute`).set('accept', 'application/json')).status).toBe(403);
    expect(await stored()).toMatchObject({ muted: false, activated: true });

    const muted = await agent.post(`${url}/mute`).type('form').send({ _csrf: csrf });
    expect(muted.status).toBe(303);
    expect(muted.headers.location).toBe(`${url}?done=muted`);
    expect(await stored()).toMatchObject({ muted: true, activated: true, name: 'orders-db' });
    const page = await agent.get(muted.headers.location!);
    expect(page.text).toContain('Alerts of this check are muted.');
    expect(page.text).toContain(`action="${url}/unmute"`);

    await agent.post(`${url}/deactivate`).type('form').send({ _csrf: csrf }).expect(303);
    expect(await stored()).toMatchObject({ muted: true, activated: false });
    await agent.post(`${url}/unmute`).type('form').send({ _csrf: csrf }).expect(303);
    await agent.post(`${url}/activate`).type('form').send({ _csrf: csrf }).expect(303);
    expect(await stored()).toMatchObject({ muted: false, activated: true, request: { hostname: '127.0.0.1', port: 5432 } });
  });

  it('deletes a check only from the confirmation\'s form, then goes back to the list', async () => {
    h = await consoleHarness(backend);
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('old-db'));
    const { agent, csrf } = await signedIn(h.app, h.a);
    const url = `/console/checks/${check.id}`;
    expect((await agent.get(url)).text).toContain(`href="${url}/delete"`);
    const confirm = await agent.get(`${url}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`<form method="post" action="${url}/delete">`);
    expect((await agent.post(`${url}/delete`).type('form').send({})).status).toBe(403);
    expect((await h.vigil.storage.checks.get(h.a.accountId, check.id))?.id).toBe(check.id);
    const gone = await agent.post(`${url}/delete`).type('form').send({ _csrf: csrf });
    expect(gone.status).toBe(303);
    expect(gone.headers.location).toBe('/console/');
    expect(await h.vigil.storage.checks.get(h.a.accountId, check.id)).toBeNull();
    expect((await agent.get(url)).status).toBe(404);
  });

  it('answers 404 to every action on another account\'s check, and changes nothing', async () => {
    h = await consoleHarness(backend);
    const theirs = await h.vigil.checks.create(h.b.accountId, 'TCP', tcp('their-db'));
    const group = await h.vigil.errorGroups.recordOccurrence(h.b.accountId, theirs.id, 'connect ECONNREFUSED', '2026-05-01T11:00:00.000Z');
    const mine = await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('my-db'));
    const { agent, csrf } = await signedIn(h.app, h.a);
    for (const action of ['mute', 'unmute', 'activate', 'deactivate', 'delete', 'run', `error-groups/${group.id}/archive`]) {
      const res = await agent.post(`/console/checks/${theirs.id}/${action}`).type('form').send({ _csrf: csrf });
      expect(res.status, action).toBe(404);
      expect(res.text, action).not.toContain('their-db');
    }
    // B's error group under A's own check, and A's group of another of its checks.
    expect((await agent.post(`/console/checks/${mine.id}/error-groups/${group.id}/archive`).type('form').send({ _csrf: csrf })).status).toBe(404);
    const sibling = await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('sibling-db'));
    const siblingGroup = await h.vigil.errorGroups.recordOccurrence(h.a.accountId, sibling.id, 'read ETIMEDOUT', '2026-05-01T11:00:00.000Z');
    expect((await agent.post(`/console/checks/${mine.id}/error-groups/${siblingGroup.id}/archive`).type('form').send({ _csrf: csrf })).status).toBe(404);
    expect(await h.vigil.storage.errorGroups.get(h.a.accountId, siblingGroup.id)).toMatchObject({ archivedUntilNextEvent: false });
    // A script's run of B's check: 404 too.
    expect((await agent.post(`/console/checks/${theirs.id}/run`).set('accept', 'application/json').set('x-csrf-token', csrf)).status).toBe(404);
    expect(await h.vigil.checks.getRecord(h.b.accountId, theirs.id)).toMatchObject({ muted: false, activated: true });
    expect(await h.vigil.storage.errorGroups.get(h.b.accountId, group.id)).toMatchObject({ archivedUntilNextEvent: false, archivedForever: false });
    expect(await h.vigil.storage.schedule.list(h.b.accountId, theirs.id)).not.toContainEqual(expect.objectContaining({ kind: 'session' }));
  });

  it('archives an error group of the check, until its next occurrence or for ever', async () => {
    h = await consoleHarness(backend);
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('orders-db'));
    const first = await h.vigil.errorGroups.recordOccurrence(h.a.accountId, check.id, 'connect ECONNREFUSED', '2026-05-01T11:00:00.000Z');
    const second = await h.vigil.errorGroups.recordOccurrence(h.a.accountId, check.id, 'read ETIMEDOUT', '2026-05-01T11:05:00.000Z');
    const { agent, csrf } = await signedIn(h.app, h.a);
    const url = `/console/checks/${check.id}`;
    expect((await agent.post(`${url}/error-groups/${first.id}/archive`).type('form').send({ until: 'next' })).status).toBe(403);
    const res = await agent.post(`${url}/error-groups/${first.id}/archive`).type('form').send({ _csrf: csrf, until: 'next' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${url}?done=archived`);
    await agent.post(`${url}/error-groups/${second.id}/archive`).type('form').send({ _csrf: csrf, until: 'forever' }).expect(303);
    expect(await h.vigil.storage.errorGroups.get(h.a.accountId, first.id)).toMatchObject({ archivedUntilNextEvent: true, archivedForever: false });
    expect(await h.vigil.storage.errorGroups.get(h.a.accountId, second.id)).toMatchObject({ archivedForever: true });
    const page = await agent.get(url);
    expect(page.text).not.toContain(`/error-groups/${first.id}/archive`);
    expect(page.text).toContain('Archived');
  });

  it('runs now: a script gets a progress URL whose state becomes final; a form without script is sent back to the page with the session\'s state', async () => {
    // Each run takes 1.5 s of the fake clock, so a page asked for right after "run now" sees it under way.
    const runner = new FakeRunner('TCP', [() => new Promise((resolve) => {
      h.clock.setTimer(new Date(h.clock.now().getTime() + 1_500), () => resolve({ responseTime: 77, phases: { total: 77 } }));
    })]);
    h = await consoleHarness(backend, {}, { runners: [runner] });
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('orders-db'));
    const inactive = await h.vigil.checks.create(h.a.accountId, 'TCP', { ...tcp('old-db'), activated: false });
    const { agent, csrf } = await signedIn(h.app, h.a);
    const url = `/console/checks/${check.id}`;
    expect((await agent.post(`${url}/run`).set('accept', 'application/json')).status).toBe(403);

    const started = await agent.post(`${url}/run`).set('accept', 'application/json').set('x-csrf-token', csrf);
    expect(started.status).toBe(202);
    const { progressUrl, final, text } = started.body as { progressUrl: string; final: boolean; text: string };
    expect(progressUrl).toMatch(new RegExp(`^${url}/sessions/[0-9a-f-]{36}$`));
    expect(final).toBe(false);
    expect(text).toContain('0 of 1 location');

    await h.vigil.start();
    let progress = { final: false, text: '' };
    for (let i = 0; i < 100 && !progress.final; i++) {
      await step(h);
      const res = await agent.get(progressUrl).set('accept', 'application/json');
      expect(res.status).toBe(200);
      progress = res.body as typeof progress;
    }
    expect(progress).toEqual({ final: true, status: 'PASSED', text: 'Run finished: passed (1 location).' });
    expect(runner.jobs.map((j) => j.check.id)).toContain(check.id);

    // Without script: a redirect to the page, which shows the session's state (and, while it runs, where to poll).
    const form = await agent.post(`${url}/run`).type('form').send({ _csrf: csrf });
    expect(form.status).toBe(303);
    expect(form.headers.location).toMatch(new RegExp(`^${url}\\?session=[0-9a-f-]{36}$`));
    const page = await agent.get(form.headers.location!);
    expect(page.text).toMatch(/<p id="run-progress" role="status" aria-live="polite" data-progress="[^"]+">(Waiting to run|Running): 0 of 1 location done\./);
    for (let i = 0; i < 100 && !(await agent.get(form.headers.location!)).text.includes('Run finished'); i++) await step(h);
    const after = await agent.get(form.headers.location!);
    expect(after.text).toContain('Run finished: passed (1 location).');
    expect(after.text).not.toContain('data-progress');
    expect(after.text).toContain('77 ms');

    // An inactive check is not run: 409, with the reason.
    const refused = await agent.post(`/console/checks/${inactive.id}/run`).set('accept', 'application/json').set('x-csrf-token', csrf);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ statusCode: 409, message: expect.stringContaining('inactive') });
  });
});
