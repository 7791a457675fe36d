import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { directoryArtifacts } from '@vigil/core';
import { checkResultFixture, outboxMessageFixture } from '@vigil/core/testing';
import { BACKENDS, consoleHarness, dropPostgresSchema, signedIn, type ConsoleHarness } from './support/harness.js';

let h: ConsoleHarness;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
});
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await dropPostgresSchema();
});

const tcp = (name: string) => ({ name, request: { hostname: '127.0.0.1', port: 5432 }, locations: ['eu-west-1', 'us-east-1'] });
/** A PNG's first bytes: enough for the route, which serves what the store holds. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe.each(BACKENDS)('a check\'s page on %s', (backend) => {
  it('shows the range\'s figures, chart, runs per location, results with their details, error groups and alert history, all escaped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-console-artifacts-'));
    dirs.push(dir);
    const artifacts = directoryArtifacts(dir);
    h = await consoleHarness(backend, { artifacts });
    const { accountId } = h.a;
    const check = await h.vigil.checks.create(accountId, 'TCP', tcp('orders-db <b>"x"</b>'));
    const failedId = '11111111-1111-4111-8111-111111111111';
    const ref = await artifacts.save({ accountId, checkId: check.id, runId: failedId }, { name: '01-failure.png', contentType: 'image/png', data: PNG });
    // Four runs in the last hour (one failed, with a screenshot and a log line that looks like markup), one two days ago.
    await h.vigil.storage.checkResults.insertMany(accountId, [
      checkResultFixture(check.id, { startedAt: '2026-05-01T11:05:00.000Z', responseTime: 100, runLocation: 'eu-west-1' }),
      checkResultFixture(check.id, { startedAt: '2026-05-01T11:20:00.000Z', responseTime: 200, runLocation: 'us-east-1' }),
      checkResultFixture(check.id, { startedAt: '2026-05-01T11:35:00.000Z', responseTime: 300, runLocation: 'eu-west-1' }),
      checkResultFixture(check.id, {
        id: failedId, startedAt: '2026-05-01T11:50:00.000Z', responseTime: 400, runLocation: 'us-east-1', hasFailures: true, errorMessage: 'connect ECONNREFUSED <img src=x>',
        details: {
          assertions: [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', property: '', target: '250', actual: 400, passed: false }],
          logs: [{ source: 'script', level: 'info', text: '<script>alert(2)</script>', at: 12 }],
          artifacts: [{ name: '01-failure.png', contentType: 'image/png', bytes: PNG.length, ref }],
        },
      }),
      checkResultFixture(check.id, { startedAt: '2026-04-29T11:00:00.000Z', responseTime: 5_000, runLocation: 'eu-west-1' }),
      // A retried run's first attempt: inside its run (attempts), not a row of its own.
      checkResultFixture(check.id, { id: '33333333-3333-4333-8333-333333333333', startedAt: '2026-05-01T11:49:00.000Z', responseTime: 7, runLocation: 'us-east-1', resultType: 'ATTEMPT', hasFailures: true, errorMessage: 'first attempt refused' }),
    ]);
    await h.vigil.errorGroups.recordOccurrence(accountId, check.id, 'connect ECONNREFUSED <img src=x>', '2026-05-01T11:40:00.000Z');
    const channel = await h.vigil.alertChannels.create(accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const alertId = '22222222-2222-4222-8222-222222222222';
    await h.vigil.storage.outbox.enqueue([outboxMessageFixture(accountId, {
      id: alertId, checkId: check.id, alertChannelId: channel.id, alertType: 'ALERT_FAILURE', created_at: '2026-05-01T11:40:05.000Z', nextAttemptAt: '2026-05-01T11:40:05.000Z',
      payload: { kind: 'alert', errorMessage: 'connect ECONNREFUSED <img src=x>', runLocation: 'us-east-1' } as never,
    })]);
    await h.vigil.storage.outbox.recordAttempt({ outboxId: alertId, accountId, alertChannelId: channel.id, at: '2026-05-01T11:40:06.000Z', ok: false, detail: 'SMTP 451 <try later>' });

    const { agent } = await signedIn(h.app, h.a);
    const page = await agent.get(`/console/checks/${check.id}`);
    expect(page.status).toBe(200);
    const html = page.text;
    expect(html).toContain('orders-db &lt;b&gt;&quot;x&quot;&lt;/b&gt;');
    expect(html).not.toMatch(/<script>alert|<img src=x|<b>"x"/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/\sstyle=/i);
    // 24 hours by default: four runs, one failed.
    expect(html).toContain('<dt>Availability</dt><dd>75%</dd>');
    expect(html).toContain('<dt>Runs</dt><dd>4</dd>');
    expect(html).toContain('<dt>p50</dt><dd>250 ms</dd>');
    const series = JSON.parse(/data-series="([^"]+)"/.exec(html)![1]!.replaceAll('&quot;', '"')) as { from: number; to: number; t: number[]; p50: number[]; p95: number[]; p99: number[] };
    expect(series.t.length).toBe(4);
    expect(series.p50).toEqual([100, 200, 300, 400]);
    expect(Object.keys(series)).toEqual(['from', 'to', 't', 'p50', 'p95', 'p99']);
    // The x axis spans the whole day, whatever the points.
    expect(series.to - series.from).toBe(24 * 3600);
    expect(series.t.every((t) => t >= series.from && t < series.to)).toBe(true);
    // Runs per location.
    expect(html).toMatch(/<td>eu-west-1<\/td><td class="num">2<\/td><td class="num">0<\/td><td class="num">100%<\/td><td class="num">200 ms<\/td>/);
    expect(html).toMatch(/<td>us-east-1<\/td><td class="num">2<\/td><td class="num">1<\/td><td class="num">50%<\/td><td class="num">300 ms<\/td>/);
    // The failed run's details: error, assertion, log (escaped), screenshot from the console itself.
    expect(html).toContain('connect ECONNREFUSED &lt;img src&#x3D;x&gt;');
    expect(html).not.toContain('first attempt refused');
    expect(html).toContain('<td>RESPONSE_TIME</td>');
    expect(html).toContain('[info] &lt;script&gt;alert(2)&lt;/script&gt;');
    const shot = `/console/checks/${check.id}/results/${failedId}/artifacts/0`;
    expect(html).toContain(`<img src="${shot}"`);
    // Error group with its archive form; alert history with channel, state and attempt.
    expect(html).toContain(`/console/checks/${check.id}/error-groups/`);
    expect(html).toContain(`data-alert="${alertId}"`);
    expect(html).toContain(`EMAIL #${channel.id}`);
    expect(html).toContain('Being sent');
    expect(html).toContain('SMTP 451 &lt;try later&gt;');
    // The alert's channel links to its form.
    expect(html).toContain(`href="/console/r/alert-channel-email/${channel.id}/edit"`);
    expect((await agent.get(`/console/r/alert-channel-email/${channel.id}/edit`)).status).toBe(200);

    const image = await agent.get(shot);
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.compare(image.body as Buffer, PNG)).toBe(0);
    expect((await agent.get(`/console/checks/${check.id}/results/${failedId}/artifacts/1`)).status).toBe(404);

    // Ranges are links; 7 days takes in the run of two days ago, 1 hour the four of the last hour.
    for (const range of ['1h', '24h', '7d', '30d']) expect(html).toContain(`href="?range=${range}"`);
    expect(html).toMatch(/href="\?range=24h" aria-current="true"/);
    const week = await agent.get(`/console/checks/${check.id}?range=7d`);
    expect(week.text).toContain('<dt>Runs</dt><dd>5</dd>');
    expect(week.text).toMatch(/href="\?range=7d" aria-current="true"/);
    expect((await agent.get(`/console/checks/${check.id}?range=1h`)).text).toContain('<dt>Runs</dt><dd>4</dd>');
    // A range it does not know is the default one.
    expect((await agent.get(`/console/checks/${check.id}?range=%3Cx%3E`)).text).toMatch(/href="\?range=24h" aria-current="true"/);
  });

  it('shows the same state as the check list: its group\'s switches and maintenance count', async () => {
    h = await consoleHarness(backend);
    const { accountId } = h.a;
    const group = await h.vigil.checkGroups.create(accountId, { name: 'Legacy', activated: false, muted: true });
    const grouped = await h.vigil.checks.create(accountId, 'TCP', { ...tcp('legacy-db'), groupId: group.id });
    const windowed = await h.vigil.checks.create(accountId, 'TCP', { ...tcp('billing-db'), tags: ['billing'] });
    await h.vigil.maintenanceWindows.create(accountId, { name: 'Upgrade', tags: ['billing'], startsAt: '2026-05-01T11:00:00.000Z', endsAt: '2026-05-01T13:00:00.000Z', repeatUnit: 'DAY', repeatEndsAt: '2026-05-01T13:00:00.000Z' });
    const { agent } = await signedIn(h.app, h.a);
    const list = (await agent.get('/console/')).text;
    for (const [check, label] of [[grouped, 'Inactive · muted'], [windowed, 'Paused by maintenance']] as const) {
      const page = (await agent.get(`/console/checks/${check.id}`)).text;
      expect(page).toContain(`>${label}<`);
      expect(list.slice(list.indexOf(`data-check="${check.id}"`))).toContain(`>${label}<`);
    }
  });

  it('answers 404 for another account\'s check exactly as for an unknown id, on the page and every read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-console-artifacts-'));
    dirs.push(dir);
    const artifacts = directoryArtifacts(dir);
    h = await consoleHarness(backend, { artifacts });
    const theirs = await h.vigil.checks.create(h.b.accountId, 'TCP', tcp('their-db'));
    const mine = await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('my-db'));
    const runId = '33333333-3333-4333-8333-333333333333';
    const ref = await artifacts.save({ accountId: h.b.accountId, checkId: theirs.id, runId }, { name: '01-failure.png', contentType: 'image/png', data: PNG });
    await h.vigil.storage.checkResults.insertMany(h.b.accountId, [checkResultFixture(theirs.id, {
      id: runId, startedAt: '2026-05-01T11:40:00.000Z', details: { artifacts: [{ name: '01-failure.png', contentType: 'image/png', bytes: PNG.length, ref }] },
    })]);
    const { session } = (await h.vigil.checkSessions.trigger(h.b.accountId, { target: { checkId: [theirs.id] } })).sessions.map((s) => ({ session: s }))[0]!;
    const { agent } = await signedIn(h.app, h.a);
    const unknown = await agent.get('/console/checks/00000000-0000-4000-8000-000000000000');
    const other = await agent.get(`/console/checks/${theirs.id}`);
    expect(unknown.status).toBe(404);
    expect(other.status).toBe(404);
    const body = (html: string) => html.replace(/nonce="[^"]+"|content="[^"]+"|value="[^"]+"/g, '');
    expect(body(other.text)).toBe(body(unknown.text));
    expect(other.text).not.toContain('their-db');
    for (const path of [
      `/console/checks/${theirs.id}/delete`,
      `/console/checks/${theirs.id}/sessions/${session.checkSessionId}`,
      `/console/checks/${theirs.id}/results/${runId}/artifacts/0`,
      // B's result and session under A's own check.
      `/console/checks/${mine.id}/results/${runId}/artifacts/0`,
      `/console/checks/${mine.id}/sessions/${session.checkSessionId}`,
    ]) {
      const res = await agent.get(path).set('accept', path.includes('/sessions/') ? 'application/json' : 'text/html');
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toContain('their-db');
    }
    // A session of another of A's checks is not this check's.
    const sibling = await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('sibling-db'));
    const [siblingSession] = (await h.vigil.checkSessions.trigger(h.a.accountId, { target: { checkId: [sibling.id] } })).sessions;
    expect((await agent.get(`/console/checks/${mine.id}/sessions/${siblingSession!.checkSessionId}`).set('accept', 'application/json')).status).toBe(404);
    expect((await agent.get(`/console/checks/${sibling.id}/sessions/${siblingSession!.checkSessionId}`).set('accept', 'application/json')).status).toBe(200);
    // B's session named on A's page is not shown.
    expect((await agent.get(`/console/checks/${mine.id}?session=${session.checkSessionId}`)).text).not.toContain('data-progress');
  });
});
