import type { ApiHarness } from './harness.js';
import type { Body } from './routes.js';

export const apiBody = (over: Body = {}): Body => ({ name: 'orders API', request: { url: 'https://api.example.com/orders' }, ...over });
export const browserBody = (over: Body = {}): Body => ({ name: 'home page', script: "await page.goto('https://example.com')", ...over });
export const heartbeatBody = (over: Body = {}): Body => ({
  name: 'nightly backup',
  heartbeat: { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'hours' },
  ...over,
});

export const NO_ALERT_CHANNELS = { email: [], webhook: [], chat: [], sms: [] };

/** Everything account a stores about checks, groups and statuses (to prove a request changed nothing). */
export async function snapshotA(h: ApiHarness): Promise<string> {
  const s = h.vigil.storage;
  const id = h.a.accountId;
  return JSON.stringify({
    checks: await s.checks.listAll(id),
    groups: await s.checkGroups.listAll(id),
    subs: await s.alertSubscriptions.listAll(id),
    statuses: await s.checkStatuses.list(id),
  });
}
