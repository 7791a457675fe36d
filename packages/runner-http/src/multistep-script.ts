import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { ValidationError } from '@vigil/core';
import type { ScriptWorker } from './script-process.js';

/** The names a multi-step script's code is called with, in order (child/multistep-worker.cjs calls it so). */
export const MULTI_STEP_PARAMETERS = ['request', 'expect', 'step', 'markDegraded', 'require'] as const;

/** The file name a script's stack traces and messages show. */
export const MULTI_STEP_FILENAME = 'script.js';

/** The code as the worker compiles it: the body of an async function. */
export function multiStepSource(code: string): string {
  return `(async function (${MULTI_STEP_PARAMETERS.join(', ')}) {\n${code}\n})`;
}

/** Why the script does not compile, with its line, or null when it does. It only compiles; nothing runs. */
export function multiStepSyntaxError(code: string): string | null {
  try {
    new Script(multiStepSource(code), { filename: MULTI_STEP_FILENAME, lineOffset: -1 });
    return null;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const line = err instanceof Error ? new RegExp(`${MULTI_STEP_FILENAME.replace('.', '\\.')}:(\\d+)`).exec(String(err.stack))?.[1] : undefined;
    return `does not compile: ${message}${line ? ` (line ${line})` : ''}`;
  }
}

/** The multi-step rule the schema cannot state: the script compiles. Throws core's ValidationError naming `script`. */
export function validateMultiStepCheck(check: unknown): void {
  if (check === null || typeof check !== 'object') throw new ValidationError([{ path: 'script', message: 'is required' }]);
  const script = (check as { script?: unknown }).script;
  if (typeof script !== 'string') return;
  const problem = multiStepSyntaxError(script);
  if (problem) throw new ValidationError([{ path: 'script', message: problem }]);
}

/** The characters of JavaScript's simple string escapes. */
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0', "'": "'", '"': '"', '`': '`', '\\': '\\' };

/** A string literal's body as JavaScript reads it, or null for an escape this does not read (octal, a line continuation). */
function unescape(raw: string): string | null {
  let failed = false;
  const out = raw.replace(/\\(u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|[\s\S])/g, (_m, what: string, braced?: string, u4?: string, x2?: string) => {
    const hex = braced ?? u4 ?? x2;
    if (hex !== undefined) {
      const code = Number.parseInt(hex, 16);
      if (code > 0x10ffff) failed = true;
      return failed ? '' : String.fromCodePoint(code);
    }
    const known = ESCAPES[what];
    if (known === undefined) failed = true;
    return known ?? '';
  });
  return failed ? null : out;
}

/**
 * The names of the steps the source declares, in order: each `step(` call whose whole first
 * argument is a string literal ('...', "..." or a template without `${`), read with JavaScript's
 * escapes. A step whose name is computed (`step('item ' + i, ...)`) is known only once it runs,
 * and one whose literal has an escape this does not read is left out. A simple scan: a call in a
 * comment counts too.
 */
export function declaredSteps(code: string): string[] {
  const out: string[] = [];
  const pattern = /(?<![\w$.])step\s*\(\s*(?:'((?:\\.|[^'\\\n])*)'|"((?:\\.|[^"\\\n])*)"|`((?:\\.|[^`\\$])*)`)\s*,/g;
  for (const m of code.matchAll(pattern)) {
    const name = unescape(m[1] ?? m[2] ?? m[3] ?? '');
    if (name !== null) out.push(name);
  }
  return out;
}

const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));

/**
 * The multi-step worker and what its process may read. The built package runs
 * dist/multistep-worker.cjs, the worker with `expect` and the child files it loads in one bundle
 * (one read, no module resolution); from the sources, child/multistep-worker.cjs loads them from
 * child/ and node_modules, and the process may read those folders.
 */
export function multiStepWorker(): ScriptWorker {
  const folder = realpathSync(here);
  const bundle = join(folder, 'multistep-worker.cjs');
  if (existsSync(bundle)) return { file: bundle, readPaths: [bundle] };
  const packageRoot = realpathSync(join(here, '..'));
  const file = join(packageRoot, 'child', 'multistep-worker.cjs');
  const manifest = realpathSync(createRequire(file).resolve('expect/package.json'));
  const at = manifest.lastIndexOf(join('node_modules', 'expect'));
  const modules = at >= 0 ? manifest.slice(0, at + 'node_modules'.length) : dirname(manifest);
  return { file, readPaths: [`${join(packageRoot, 'child')}/*`, `${modules}/*`] };
}
