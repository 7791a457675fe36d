/** @vigil/runner-browser: runs browser checks as scripts in a real Chromium. */
export const BROWSER_CHECK_TYPE = 'BROWSER' as const;
