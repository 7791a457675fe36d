import { isSuiteConfigFile, ValidationError, type ValidationIssue } from '@vigil/core';
import { suitePathProblem } from './suite-folder.js';

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
const CONFIG_ANYWHERE = /(^|\/)playwright\.config\.[cm]?[jt]s$/;

/**
 * What the runner adds to the model's rules (which hold the files' count, size and paths): a
 * Playwright config only at the suite's root, and no file where the runner keeps its own.
 */
export function validatePlaywrightCheck(check: unknown): void {
  const files = isObject(check) ? check.files : undefined;
  if (!isObject(files)) throw new ValidationError([{ path: 'files', message: 'is required: the suite\'s files by path' }]);
  const issues: ValidationIssue[] = [];
  for (const path of Object.keys(files)) {
    if (CONFIG_ANYWHERE.test(path) && !isSuiteConfigFile(path)) issues.push({ path: `files.${path}`, message: 'a Playwright config must be at the suite\'s root' });
    const problem = suitePathProblem(path);
    if (problem) issues.push({ path: `files.${path}`, message: problem });
  }
  if (issues.length > 0) throw new ValidationError(issues);
}
