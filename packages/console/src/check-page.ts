import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request, Response, Router } from 'express';
import { directoryArtifacts, hasCode, type ArtifactStore } from '@vigil/core';
import { mountCheckActions } from './check-actions.js';
import { checkUrl, progressUrl, sendJsonError, sessionOfCheck } from './check-http.js';
import { artifactsOf, checkView, pageOf, RANGES, rangeOf, sessionProgress } from './check-view.js';
import { contextOf, layoutOf, wrap, type ConsoleKit } from './kit.js';
import { checkPage, deleteCheckPage } from './templates-check.js';

export interface CheckPageOptions {
  /**
   * Where runs keep their screenshots: the store given to the browser runner. Default: the
   * browser runner's default, files under `<tmpdir>/vigil-artifacts`.
   */
  artifacts?: ArtifactStore;
}

/** Notices a redirect back to the page names (`?done=`): only these texts are ever shown. */
const NOTICES: Record<string, string> = {
  muted: 'Alerts of this check are muted.',
  unmuted: 'Alerts of this check are on again.',
  activated: 'The check is active and runs on its schedule.',
  deactivated: 'The check is inactive: it does not run until it is activated.',
  archived: 'The error group is archived.',
};

/**
 * A check's page and what it reads: the page, the progress of a run started from it, a run's
 * screenshots, and the delete confirmation; its forms' actions are in check-actions.ts. Every
 * route reads the check in the signed-in account first, so another account's id answers 404
 * exactly as an unknown id does.
 */
export function mountCheckPages(router: Router, kit: ConsoleKit, options: CheckPageOptions = {}): void {
  const { vigil } = kit;
  const artifacts = options.artifacts ?? directoryArtifacts(join(tmpdir(), 'vigil-artifacts'));

  router.get('/checks/:id', wrap(async (req, res, next) => {
    // The check form's page (another module's) lives at /checks/new.
    if (req.params.id === 'new') return next();
    const { accountId } = contextOf(res);
    const range = rangeOf(req.query.range);
    const view = await checkView(vigil, accountId, String(req.params.id), { range, page: pageOf(req.query.page) });
    const session = await sessionOfCheck(kit, accountId, view.check.id, req.query.session);
    const layout = layoutOf(kit, req, res, { section: '/' });
    const done = typeof req.query.done === 'string' && Object.hasOwn(NOTICES, req.query.done) ? NOTICES[req.query.done] : undefined;
    res.type('html').send(checkPage({
      layout,
      title: view.check.name,
      ...view,
      range,
      rangeLabel: RANGES[range].label,
      ranges: Object.entries(RANGES).map(([key, r]) => ({ key, label: r.label, current: key === range })),
      notice: done,
      session: session && {
        ...sessionProgress(session),
        progressUrl: progressUrl(req, view.check.id, session.checkSessionId),
        pageUrl: `${checkUrl(req, view.check.id)}?session=${encodeURIComponent(session.checkSessionId)}`,
      },
    }));
  }));

  router.get('/checks/:id/sessions/:sessionId', wrap(async (req, res) => {
    const { accountId } = contextOf(res);
    const check = await vigil.checks.getRecord(accountId, req.params.id);
    const session = await sessionOfCheck(kit, accountId, check.id, req.params.sessionId);
    if (!session) return sendJsonError(res, 404, 'Not Found', 'Check session not found');
    res.set('Cache-Control', 'no-store').json(sessionProgress(session));
  }));

  router.get('/checks/:id/results/:resultId/artifacts/:index', wrap(async (req, res) => {
    const { accountId } = contextOf(res);
    const check = await vigil.checks.getRecord(accountId, req.params.id);
    const notFound = () => void res.status(404).type('text/plain').set('Cache-Control', 'no-store').send('Not found');
    let result;
    try {
      result = await vigil.checkResults.get(accountId, req.params.resultId, check.id);
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND') || hasCode(err, 'VALIDATION')) return notFound();
      throw err;
    }
    const index = /^[0-9]{1,3}$/.test(String(req.params.index)) ? Number(req.params.index) : -1;
    const artifact = result.checkId === check.id ? artifactsOf(result)[index] : undefined;
    if (!artifact) return notFound();
    let data: Uint8Array;
    try {
      data = await artifacts.read(artifact.ref);
    } catch {
      // Gone with its run's retention, or never stored.
      return notFound();
    }
    res.set({
      'Content-Security-Policy': "default-src 'none'; sandbox",
      'X-Content-Type-Options': 'nosniff',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'private, max-age=86400',
    });
    // Only images are shown in the page; anything else is a download, never rendered here.
    if (artifact.image) res.type(artifact.contentType);
    else res.type('application/octet-stream').attachment(artifact.name);
    res.send(Buffer.from(data));
  }));

  router.get('/checks/:id/delete', wrap(async (req, res) => {
    const { accountId } = contextOf(res);
    const check = await vigil.checks.getRecord(accountId, req.params.id);
    const layout = layoutOf(kit, req, res, { section: '/' });
    res.type('html').send(deleteCheckPage({ layout, title: `Delete ${check.name}`, check: { id: check.id, name: check.name } }));
  }));

  mountCheckActions(router, kit);
}
