import { describe, expect, it } from 'vitest';
import { browserRunner, cumulativeLayoutShift, defaultChromium, validateBrowserCheck } from '../src/index.js';
import { browserJob } from './support.js';

const signal = () => new AbortController().signal;

// What needs no running browser: a check's validation, the layout-shift score, and which Chromium runs.
describe('validateBrowserCheck', () => {
  const issues = (check: unknown) => {
    try {
      validateBrowserCheck(check);
      return [];
    } catch (err) {
      return (err as { issues: { path: string; message: string }[] }).issues;
    }
  };

  it('accepts a script that compiles, top-level await and all', () => {
    expect(issues({ script: "await page.goto('https://example.com');\nconst t = await page.title();" })).toEqual([]);
  });

  it('names the script and its line when it does not compile', () => {
    expect(issues({ script: "await page.goto('https://example.com');\nconst = 1;" })).toEqual([
      { path: 'script', message: expect.stringMatching(/^does not compile: Unexpected token '=' \(line 2\)$/) },
    ]);
  });

  it('refuses two files at one path', () => {
    expect(issues({
      script: '1',
      scriptPath: 'tests/a.js',
      dependencies: [{ path: './tests/a.js', content: '' }, { path: 'lib/x.js', content: '' }, { path: 'lib/x.js', content: '' }],
    })).toEqual([
      { path: 'dependencies.0.path', message: 'names a file that the script or another dependency already is' },
      { path: 'dependencies.2.path', message: 'names a file that the script or another dependency already is' },
    ]);
  });
});

describe('cumulativeLayoutShift', () => {
  it('is the largest session window of shifts (gaps under 1 s, windows up to 5 s)', () => {
    expect(cumulativeLayoutShift([])).toBe(0);
    expect(cumulativeLayoutShift([{ at: 0, value: 0.1 }, { at: 500, value: 0.2 }, { at: 2_000, value: 0.25 }])).toBe(0.3);
    // Shifts every 900 ms keep one window going, but only for 5 s.
    const steady = Array.from({ length: 8 }, (_, i) => ({ at: i * 900, value: 0.1 }));
    expect(cumulativeLayoutShift(steady)).toBe(0.6);
  });
});

describe('defaultChromium', () => {
  const only = (...paths: string[]) => (path: string) => paths.includes(path);
  it('runs PUPPETEER_EXECUTABLE_PATH when it is set', () => {
    expect(defaultChromium({ PUPPETEER_EXECUTABLE_PATH: '/opt/chrome/chrome' }, only('/usr/bin/chromium'))).toBe('/opt/chrome/chrome');
  });
  it("runs Debian's chromium when it is installed, also beside the headless shell", () => {
    expect(defaultChromium({}, only('/usr/bin/chromium', '/usr/bin/chromium-headless-shell'))).toBe('/usr/bin/chromium');
  });
  it('runs the headless shell where only it is installed', () => {
    expect(defaultChromium({}, only('/usr/bin/chromium-headless-shell'))).toBe('/usr/bin/chromium-headless-shell');
  });
  it('names /usr/bin/chromium where neither is installed, so that the error says what is missing', () => {
    expect(defaultChromium({}, only())).toBe('/usr/bin/chromium');
  });
  it('fails a run with an error that names the missing Chromium and how to install it', async () => {
    const runner = browserRunner({ executablePath: '/nonexistent/chromium' });
    try {
      const result = await runner.run(browserJob({ script: 'await page.goto("about:blank");' }), signal());
      expect(result.hasErrors).toBe(true);
      expect(result.errorMessage).toBe('The browser could not be started: there is no Chromium at /nonexistent/chromium (on Debian: apt-get install chromium, or chromium-headless-shell; executablePath or PUPPETEER_EXECUTABLE_PATH names another)');
    } finally {
      await runner.close();
    }
  });
});
