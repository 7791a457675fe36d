import vm from 'node:vm';
import { ValidationError, type ValidationIssue } from '@vigil/core';

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** The parameters a script's code sees; the worker wraps the code the same way. */
export const SCRIPT_PARAMETERS = 'page, browser, context, require, module, exports, __filename, __dirname, expect, assert, markDegraded';

/** Compiles (never runs) a script as the worker will: a message naming the line when it does not parse. */
export function scriptSyntaxError(code: string): string | null {
  try {
    new vm.Script(`(async function (${SCRIPT_PARAMETERS}) {\n${code}\n})`, { filename: 'script', lineOffset: -1 });
    return null;
  } catch (err) {
    const where = /^script:(\d+)/.exec(String((err as Error).stack ?? ''))?.[1];
    return `does not compile: ${(err as Error).message}${where ? ` (line ${where})` : ''}`;
  }
}

/**
 * The browser rules that the check schema cannot state: the script compiles, and no two files
 * (the script at its scriptPath, the dependencies) share a path.
 */
export function validateBrowserCheck(check: unknown): void {
  if (!isObject(check)) throw new ValidationError([{ path: 'script', message: 'is required' }]);
  const issues: ValidationIssue[] = [];
  if (typeof check.script === 'string') {
    const problem = scriptSyntaxError(check.script);
    if (problem) issues.push({ path: 'script', message: problem });
  }
  const scriptPath = check.scriptPath;
  if (Array.isArray(check.dependencies)) {
    const seen = new Set<string>(typeof scriptPath === 'string' && scriptPath !== '' ? [normalize(scriptPath)] : []);
    check.dependencies.forEach((d: unknown, i) => {
      if (!isObject(d) || typeof d.path !== 'string') return;
      const path = normalize(d.path);
      if (seen.has(path)) issues.push({ path: `dependencies.${i}.path`, message: 'names a file that the script or another dependency already is' });
      seen.add(path);
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

export function normalize(path: string): string {
  return path.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
}
