import type { AlertChannel } from '../model/alert-channel.js';
import type { CheckGroup } from '../model/check-group.js';
import type { Check } from '../model/check.js';
import {
  accountFixture,
  alertSubscriptionFixture,
  apiCheckFixture,
  apiKeyFixture,
  browserCheckFixture,
  checkGroupFixture,
  emailChannelFixture,
  heartbeatCheckFixture,
  tcpCheckFixture,
  webhookChannelFixture,
} from './fixtures.js';
import { repositoryCases } from './storage-suite-repository.js';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  checkRawCount,
  checkRejects,
  checkSame,
  rawMatching,
  type StorageCase,
} from './storage-suite-support.js';
import { check } from './suite-types.js';

/** Text that a store must keep byte for byte: accents, CJK, emoji, quotes, a backslash. */
export const UNICODE_TEXT = 'Prüfung ✓ 監視 🚀 "quoted" \\ back';

export function resourceCases(c: StorageCase) {
  repositoryCases<Check>(c, {
    label: 'checks (TCP)',
    table: 'checks',
    repo: (s) => s.checks,
    make: (marker) => tcpCheckFixture({ name: `TCP ${marker}` }),
    change: (row, marker) => ({ ...row, name: `TCP ${marker}`, muted: !row.muted, updated_at: '2026-05-02T00:00:00.000Z' }),
    rich: (record) =>
      record.checkType !== 'TCP'
        ? record
        : {
            ...record,
            name: `${record.name} ${UNICODE_TEXT}`,
            locations: null,
            tags: [],
            privateLocations: ['lab-1'],
            description: null,
            alertSettings: { ...record.alertSettings, reminders: { amount: 100000, interval: 30 } },
            retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 0, maxRetries: 10, maxDurationSeconds: 600, sameRegion: false, onlyOn: ['NETWORK_ERROR'] },
            request: {
              hostname: 'db.example.com',
              port: 65535,
              data: '{"ping":1}\n',
              assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'pong', property: '', regex: '^p.+g$' }],
              ipFamily: 'IPv6',
            },
            frequencyOffset: 3,
            degradedResponseTime: null,
            maxResponseTime: 0,
          },
  });
  repositoryCases<Check>(c, {
    label: 'checks (API)',
    table: 'checks',
    repo: (s) => s.checks,
    make: (marker) => apiCheckFixture({ name: `API ${marker}` }),
    change: (row, marker) => (row.checkType === 'API' ? { ...row, name: `API ${marker}`, frequency: 0, frequencyOffset: 20 } : row),
    rich: (record) =>
      record.checkType !== 'API'
        ? record
        : {
            ...record,
            request: {
              method: 'POST',
              url: `https://api.example.com/orders?q=${encodeURIComponent(UNICODE_TEXT)}&b=ü`,
              headers: [{ key: 'Content-Type', value: 'application/json' }, { key: 'X-Note', value: UNICODE_TEXT }],
              queryParameters: [{ key: 'tag', value: 'a' }, { key: 'tag', value: 'b' }],
              body: JSON.stringify({ note: UNICODE_TEXT, items: [1, null, { b: [] }] }),
              bodyType: 'JSON',
              basicAuth: { username: 'ops', password: UNICODE_TEXT },
              followRedirects: false,
              skipSSL: true,
              assertions: [
                { source: 'JSON_BODY', comparison: 'EQUALS', target: 'ok', property: '$.status', regex: null },
                { source: 'HEADERS', comparison: 'CONTAINS', target: 'json', property: 'content-type', regex: '^(\\w+)/' },
              ],
              ipFamily: 'IPv6',
            },
            degradedResponseTime: null,
            maxResponseTime: 30000,
          },
  });
  repositoryCases<Check>(c, {
    label: 'checks (BROWSER)',
    table: 'checks',
    repo: (s) => s.checks,
    make: (marker) => browserCheckFixture({ name: `Browser ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Browser ${marker}`, frequency: 60 }),
    rich: (record) =>
      record.checkType !== 'BROWSER'
        ? record
        : {
            ...record,
            script: `// ${UNICODE_TEXT}\nawait page.goto('https://example.com/?q=a&b=ü');`,
            environmentVariables: [
              { key: 'EMPTY', value: '', locked: false, secret: false },
              { key: 'SERVICE_SECRET_TOKEN', value: UNICODE_TEXT, locked: true, secret: true },
            ],
            dependencies: [{ path: 'lib/helpers.js', content: 'export const x = { a: [1, null, { b: [] }] };' }],
            triggerIncident: { serviceId: 'svc-1', name: UNICODE_TEXT, description: '', notifySubscribers: true },
            alertChannelSubscriptions: [{ alertChannelId: 3, activated: false }],
          },
  });
  repositoryCases<Check>(c, {
    label: 'checks (HEARTBEAT)',
    table: 'checks',
    repo: (s) => s.checks,
    make: (marker) => heartbeatCheckFixture({ name: `Heartbeat ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Heartbeat ${marker}`, activated: false }),
  });
  repositoryCases<CheckGroup>(c, {
    label: 'check groups',
    table: 'check_groups',
    repo: (s) => s.checkGroups,
    make: (marker) => checkGroupFixture({ name: `Group ${marker}` }),
    change: (row, marker) => ({ ...row, name: `Group ${marker}`, concurrency: row.concurrency + 1 }),
    rich: (record) => ({
      ...record,
      name: UNICODE_TEXT,
      environmentVariables: null,
      retryStrategy: null,
      browserCheckDefaults: null,
      apiCheckDefaults: {
        url: 'https://api.example.com',
        headers: [{ key: 'Accept', value: 'application/json' }],
        queryParameters: [],
        assertions: [{ source: 'JSON_BODY', property: '$.items[0]', comparison: 'HAS_KEY', target: 'id', regex: null }],
        basicAuth: { username: '', password: '' },
      },
    }),
  });
  repositoryCases<AlertChannel>(c, {
    label: 'alert channels',
    table: 'alert_channels',
    repo: (s) => s.alertChannels,
    make: (marker) => webhookChannelFixture({ config: { ...webhookChannelFixture().config, name: `Hook ${marker}` } }),
    change: (row, marker) =>
      row.type === 'WEBHOOK' ? { ...row, config: { ...row.config, name: `Hook ${marker}` }, sendDegraded: true } : row,
    rich: (record) =>
      record.type !== 'WEBHOOK'
        ? record
        : {
            ...record,
            config: {
              name: UNICODE_TEXT,
              url: 'https://hooks.example.com/a?b=c',
              method: 'PUT',
              headers: [],
              queryParameters: [{ key: 'q', value: '', locked: true }],
              template: '{"text": "{{ALERT_TITLE}}"}',
              webhookSecret: null,
            },
          },
  });

  c('accounts: insert, get, update, listIds; a second insert is a conflict', async (f) => {
    const a = accountFixture({ name: `Acme ${UNICODE_TEXT}` });
    const b = accountFixture();
    checkSame(await f.storage.accounts.insert(a), a, 'insert answers the account');
    await f.storage.accounts.insert(b);
    checkSame(await f.storage.accounts.get(a.id), a, 'get answers the account');
    check((await f.storage.accounts.get(ACCOUNT_B)) === null, 'an unknown account reads as null');
    const renamed = { ...a, name: 'Renamed', updated_at: '2026-05-02T00:00:00.000Z' };
    checkSame(await f.storage.accounts.update(renamed), renamed, 'update answers the account');
    checkSame(await f.storage.accounts.get(a.id), renamed, 'get answers the updated account');
    checkSame((await f.storage.accounts.listIds()).sort(), [a.id, b.id].sort(), 'listIds answers every account');
    await checkRejects(() => f.storage.accounts.insert(a), 'CONFLICT', 'a second insert of an account id');
    await checkRawCount(f.raw, 'accounts', 2, 'accounts');
    check((await rawMatching(f.raw, 'accounts', a.id, 'Renamed')).length === 1, 'the raw row holds the new name');
  });

  c('api keys: insert, findByPrefix across accounts, list, revoke, touch', async (f) => {
    const keys = f.storage.apiKeys;
    const a = apiKeyFixture(ACCOUNT_A, { prefix: 'vgl_shared01' });
    const b = apiKeyFixture(ACCOUNT_B, { prefix: 'vgl_shared01' });
    const other = apiKeyFixture(ACCOUNT_A);
    checkSame(await keys.insert(a), a, 'insert answers the key');
    await keys.insert(b);
    await keys.insert(other);
    await checkRejects(() => keys.insert(a), 'CONFLICT', 'a second insert of a key id');
    checkSame((await keys.findByPrefix('vgl_shared01')).map((k) => k.id).sort(), [a.id, b.id].sort(), 'findByPrefix spans accounts');
    check((await keys.findByPrefix('vgl_nothing0')).length === 0, 'an unknown prefix finds nothing');
    checkSame((await keys.list(ACCOUNT_A)).map((k) => k.id), [a.id, other.id], 'list answers the account\'s keys in creation order');
    check((await keys.revoke(ACCOUNT_B, a.id, '2026-05-02T00:00:00.000Z')) === false, 'another account cannot revoke a key');
    check((await keys.findByPrefix('vgl_shared01')).every((k) => k.revokedAt === null), 'a refused revoke changes nothing');
    check((await keys.revoke(ACCOUNT_A, a.id, '2026-05-03T00:00:00.000Z')) === true, 'the owner revokes a key');
    await keys.touch(b.id, '2026-05-04T00:00:00.000Z');
    const found = await keys.findByPrefix('vgl_shared01');
    checkSame(found.find((k) => k.id === a.id)?.revokedAt, '2026-05-03T00:00:00.000Z', 'revokedAt is stored');
    checkSame(found.find((k) => k.id === b.id)?.lastUsedAt, '2026-05-04T00:00:00.000Z', 'touch stores lastUsedAt');
    check((await rawMatching(f.raw, 'api_keys', a.id, a.hash)).length === 1, 'the raw row holds the hash');
  });

  c('checks: listByGroup, listByIds, listAll, scan, findByPingToken', async (f) => {
    const checks = f.storage.checks;
    const inGroup = await checks.insert(ACCOUNT_A, tcpCheckFixture({ groupId: 7 }));
    const plain = await checks.insert(ACCOUNT_A, browserCheckFixture());
    const beat = await checks.insert(ACCOUNT_A, heartbeatCheckFixture());
    const foreign = await checks.insert(ACCOUNT_B, tcpCheckFixture({ groupId: 7 }));
    checkSame((await checks.listByGroup(ACCOUNT_A, 7)).map((x) => x.id), [inGroup.id], 'listByGroup answers this account\'s members');
    checkSame(
      (await checks.listByIds(ACCOUNT_A, [beat.id, inGroup.id, foreign.id, 'missing'])).map((x) => x.id).sort(),
      [beat.id, inGroup.id].sort(),
      'listByIds answers only this account\'s known ids',
    );
    checkSame((await checks.listAll(ACCOUNT_A)).map((x) => x.id), [inGroup.id, plain.id, beat.id], 'listAll answers in creation order');
    checkSame(
      await checks.listSummaries(ACCOUNT_A),
      [inGroup, plain, beat].map((x) => ({ id: x.id, name: x.name, checkType: x.checkType, created_at: x.created_at })),
      'listSummaries answers id, name, type and creation time of this account\'s checks in creation order',
    );
    const everyId = [inGroup.id, plain.id, beat.id, foreign.id].sort();
    const scanned: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page = await checks.scan(after, 3);
      if (page.length === 0) break;
      check(page.length <= 3, 'scan answers at most `limit` checks');
      scanned.push(...page.map((x) => x.id));
      after = page[page.length - 1]!.id;
    }
    checkSame(scanned, everyId, 'scan pages through every account\'s checks by id');
    const token = beat.checkType === 'HEARTBEAT' ? beat.heartbeat.pingToken : '';
    checkSame(await checks.findByPingToken(token), beat, 'findByPingToken answers the heartbeat check');
    check((await checks.findByPingToken('no-such-token')) === null, 'an unknown token finds nothing');
    checkSame(await checks.findAnywhere(foreign.id), foreign, 'findAnywhere answers a check of any account');
    check((await checks.findAnywhere('no-such-check')) === null, 'findAnywhere of an unknown id finds nothing');
  });

  c('check groups and alert channels: listAll answers one account\'s rows', async (f) => {
    const g1 = await f.storage.checkGroups.insert(ACCOUNT_A, checkGroupFixture());
    await f.storage.checkGroups.insert(ACCOUNT_B, checkGroupFixture());
    const g2 = await f.storage.checkGroups.insert(ACCOUNT_A, checkGroupFixture());
    checkSame((await f.storage.checkGroups.listAll(ACCOUNT_A)).map((g) => g.id), [g1.id, g2.id], 'groups of account A');
    const gb = (await f.storage.checkGroups.listAll(ACCOUNT_B))[0]!;
    checkSame(await f.storage.checkGroups.findAnywhere(gb.id), gb, 'findAnywhere answers a group of any account');
    check((await f.storage.checkGroups.findAnywhere(gb.id + 1000)) === null, 'findAnywhere of an unknown id finds nothing');
    const ch = await f.storage.alertChannels.insert(ACCOUNT_A, emailChannelFixture());
    await f.storage.alertChannels.insert(ACCOUNT_B, emailChannelFixture());
    checkSame(await f.storage.alertChannels.listAll(ACCOUNT_A), [ch], 'channels of account A');
  });

  c('alert subscriptions: insert, list by channel/check/group, replace and delete', async (f) => {
    const subs = f.storage.alertSubscriptions;
    const s1 = await subs.insert(ACCOUNT_A, alertSubscriptionFixture(1, { checkId: 'check-1' }));
    checkSame(s1, { ...alertSubscriptionFixture(1, { checkId: 'check-1' }), id: s1.id, accountId: ACCOUNT_A }, 'insert answers the row');
    const s2 = await subs.insert(ACCOUNT_A, alertSubscriptionFixture(1, { groupId: 5 }, { activated: false }));
    const s3 = await subs.insert(ACCOUNT_A, alertSubscriptionFixture(2, { checkId: 'check-1' }));
    await subs.insert(ACCOUNT_B, alertSubscriptionFixture(1, { checkId: 'check-1' }));
    checkSame((await subs.listByChannel(ACCOUNT_A, 1)).map((s) => s.id), [s1.id, s2.id], 'listByChannel');
    checkSame((await subs.listByCheck(ACCOUNT_A, 'check-1')).map((s) => s.id), [s1.id, s3.id], 'listByCheck');
    checkSame((await subs.listByGroup(ACCOUNT_A, 5)).map((s) => s.id), [s2.id], 'listByGroup');
    check((await subs.listAll(ACCOUNT_A)).length === 3, 'listAll answers this account\'s three rows');

    const replaced = await subs.replaceForChannel(ACCOUNT_A, 1, [alertSubscriptionFixture(1, { checkId: 'check-9' })]);
    check(replaced.length === 1 && replaced[0]!.checkId === 'check-9' && replaced[0]!.alertChannelId === 1, 'replaceForChannel answers the new rows');
    checkSame((await subs.listByChannel(ACCOUNT_A, 1)).map((s) => s.checkId), ['check-9'], 'replaceForChannel drops the old rows');
    check((await subs.listByChannel(ACCOUNT_B, 1)).length === 1, 'replaceForChannel leaves other accounts alone');

    const forTarget = await subs.replaceForTarget(ACCOUNT_A, { checkId: 'check-1' }, [
      alertSubscriptionFixture(4, { checkId: 'check-1' }),
      alertSubscriptionFixture(5, { checkId: 'check-1' }, { activated: false }),
    ]);
    check(forTarget.length === 2, 'replaceForTarget answers the new rows');
    checkSame((await subs.listByCheck(ACCOUNT_A, 'check-1')).map((s) => [s.alertChannelId, s.activated]), [[4, true], [5, false]], 'replaceForTarget replaces the check\'s rows');
    check((await subs.deleteByTarget(ACCOUNT_B, { checkId: 'check-1' })) === 1, 'deleteByTarget answers how many went');
    check((await subs.deleteByChannel(ACCOUNT_A, 4)) === 1, 'deleteByChannel answers how many went');
    check((await subs.deleteByChannel(ACCOUNT_A, 4)) === 0, 'nothing left to delete');
    await checkRawCount(f.raw, 'alert_subscriptions', 2, 'check-9 on channel 1 and check-1 on channel 5 are left');
  });
}
