import type { Request, Response, Router } from 'express';
import { hasCode } from '@vigil/core';
import { sessionProgress } from './check-view.js';
import { checkUrl, progressUrl, sendJsonError, wantsJson } from './check-http.js';
import { contextOf, sendMessage, wrap, type ConsoleKit } from './kit.js';

/**
 * The forms of a check's page: mute, activate, delete, run now, archive an error group. Each
 * reads the check in the signed-in account first (404 for another account's, as for an unknown
 * one), and the console's CSRF guard has already refused a POST without this browser's token.
 * Each answers a redirect back to the page (a form without script) or, for "Run now" asked by
 * the page's script, JSON.
 */
export function mountCheckActions(router: Router, kit: ConsoleKit): void {
  const { vigil } = kit;

  const toggle = (path: string, field: 'muted' | 'activated', value: boolean, done: string) => {
    router.post(`/checks/:id/${path}`, wrap(async (req, res) => {
      const { accountId } = contextOf(res);
      const check = await vigil.checks.getRecord(accountId, req.params.id);
      // A PUT of one field: the service keeps every other stored field.
      await vigil.checks.update(accountId, check.id, { [field]: value });
      res.redirect(303, `${checkUrl(req, check.id)}?done=${done}`);
    }));
  };
  toggle('mute', 'muted', true, 'muted');
  toggle('unmute', 'muted', false, 'unmuted');
  toggle('activate', 'activated', true, 'activated');
  toggle('deactivate', 'activated', false, 'deactivated');

  router.post('/checks/:id/delete', wrap(async (req, res) => {
    const { accountId } = contextOf(res);
    const check = await vigil.checks.getRecord(accountId, req.params.id);
    await vigil.checks.delete(accountId, check.id);
    res.redirect(303, `${req.baseUrl}/`);
  }));

  router.post('/checks/:id/run', wrap(async (req, res) => {
    const { accountId } = contextOf(res);
    const check = await vigil.checks.getRecord(accountId, req.params.id);
    let sessions;
    try {
      ({ sessions } = await vigil.checkSessions.trigger(accountId, { target: { checkId: [check.id] } }));
    } catch (err) {
      // The check is there (read above): no target means it, or its group, is inactive.
      if (hasCode(err, 'NOT_FOUND')) return notRunnable(req, res, check.id);
      throw err;
    }
    const session = sessions.find((s) => s.checkId === check.id);
    if (!session) return notRunnable(req, res, check.id);
    if (wantsJson(req)) {
      res.status(202).set('Cache-Control', 'no-store').json({ progressUrl: progressUrl(req, check.id, session.checkSessionId), ...sessionProgress(session) });
      return;
    }
    res.redirect(303, `${checkUrl(req, check.id)}?session=${encodeURIComponent(session.checkSessionId)}`);
  }));

  const notRunnable = (req: Request, res: Response, checkId: string) => {
    const message = 'This check is inactive (or its group is): activate it to run it.';
    if (wantsJson(req)) return sendJsonError(res, 409, 'Conflict', message);
    sendMessage(kit, req, res, 409, 'Not run', message, { href: checkUrl(req, checkId), label: 'Back to the check' });
  };

  router.post('/checks/:id/error-groups/:groupId/archive', wrap(async (req, res) => {
    const { accountId } = contextOf(res);
    const check = await vigil.checks.getRecord(accountId, req.params.id);
    // Only a group of this check: another check's (or a test project's) group reads as not found.
    const group = await vigil.errorGroups.get(accountId, req.params.groupId);
    if (!('checkId' in group) || group.checkId !== check.id) {
      return sendMessage(kit, req, res, 404, 'Not found', 'There is no such thing in this account.', { href: `${req.baseUrl}/`, label: 'All checks' });
    }
    const forever = (req.body as { until?: unknown } | undefined)?.until === 'forever';
    await vigil.errorGroups.patch(accountId, group.id, forever ? { archiveForEver: true } : { archivedUntilNextEvent: true });
    res.redirect(303, `${checkUrl(req, check.id)}?done=archived`);
  }));
}
