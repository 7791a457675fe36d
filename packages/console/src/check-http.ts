// What the check page's routes and actions share: their URLs, and answers to the page's script.
import type { Request, Response } from 'express';
import { hasCode, type CheckSessionResponse } from '@vigil/core';
import type { ConsoleKit } from './kit.js';

/** The check's URL under the console. */
export const checkUrl = (req: Request, checkId: string) => `${req.baseUrl}/checks/${encodeURIComponent(checkId)}`;

/** Where a session's progress is polled (JSON). */
export const progressUrl = (req: Request, checkId: string, sessionId: string) => `${checkUrl(req, checkId)}/sessions/${encodeURIComponent(sessionId)}`;

/** A script's request (fetch with `accept: application/json`) rather than a page's. */
export const wantsJson = (req: Request) => req.accepts(['html', 'json']) === 'json';

/** An error as a script reads it: the API's `{statusCode, error, message}` body. */
export function sendJsonError(res: Response, statusCode: number, error: string, message: string): void {
  res.status(statusCode).set('Cache-Control', 'no-store').json({ statusCode, error, message });
}

/** The session of `sessionId` when it is a session of this check of the account; else null. */
export async function sessionOfCheck(kit: ConsoleKit, accountId: string, checkId: string, sessionId: unknown): Promise<CheckSessionResponse | null> {
  if (typeof sessionId !== 'string') return null;
  try {
    const session = await kit.vigil.checkSessions.get(accountId, sessionId);
    return session.checkId === checkId ? session : null;
  } catch (err) {
    if (hasCode(err, 'NOT_FOUND') || hasCode(err, 'VALIDATION')) return null;
    throw err;
  }
}
