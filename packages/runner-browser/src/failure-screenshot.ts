import type { BrowserContext, Page } from 'puppeteer-core';
import { localRequire } from './child-files.js';

// The screenshot a failing run keeps, with the run's secrets hidden on the page first
// (child/mask.cjs, shared with the script's process).

/** Hiding secrets on a page for a screenshot. */
interface Masking {
  hidden: boolean;
  restore(): Promise<void>;
}
const mask = localRequire('./child/mask.cjs') as { hideSecrets(page: Page, secrets: string[]): Promise<Masking> };

/** `promise`'s value, or null when it fails or takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.catch(() => null),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The last page as the run left it, secrets masked. When the page cannot be masked in time (it
 * is still loading, or its script is stuck) and the run has secrets, no screenshot is taken.
 */
export async function failureScreenshot(context: BrowserContext, secrets: string[], timeoutMs: number): Promise<{ image: Uint8Array | null; error?: string }> {
  const pages = await context.pages().catch(() => [] as Page[]);
  const page = pages[pages.length - 1];
  if (!page || timeoutMs <= 0) return { image: null };
  const started = Date.now();
  let masking: Masking | null = null;
  if (secrets.length > 0) {
    const hiding = mask.hideSecrets(page, secrets);
    masking = await withTimeout(hiding, timeoutMs / 2);
    if (!masking?.hidden) {
      // Whatever did get masked (now or once the page answers) is shown again.
      void hiding.then((m) => m.restore()).catch(() => {});
      return { image: null, error: 'No failure screenshot: the page did not answer in time to hide the run\'s secrets' };
    }
  }
  try {
    const image = await withTimeout(page.screenshot({ type: 'png' }), timeoutMs - (Date.now() - started));
    return image ? { image } : { image: null, error: 'No failure screenshot: the page did not answer in time' };
  } finally {
    if (masking) void masking.restore().catch(() => {});
  }
}
