import * as v from 'valibot';
import { isSafeRelativePath, recordEntries, responseEntries, typeEntries } from './check-common.js';
import { CodeSchema } from './primitives.js';
import { compiles, EnvironmentVariablesSchema, integerBetween, modelObject, updateEntries } from './shared.js';

/** The most files a Playwright check suite holds. */
export const MAX_SUITE_FILES = 50;
/** The most characters of all of a suite's files together (each file is at most 100,000). */
export const MAX_SUITE_CHARACTERS = 1_000_000;
/** The longest a suite may run (`globalTimeout`), in milliseconds: 10 minutes. */
export const MAX_SUITE_TIMEOUT_MS = 600_000;

/** A file's path in the suite: letters, digits, `.`, `_`, `-` and `/`, relative, no `..`, no hidden segment. */
const SUITE_PATH = /^(?!\/)(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
const TEST_FILE = /\.(?:spec|test)\.(?:[cm]?[jt]s)$/;
const CONFIG_FILE = /^playwright\.config\.(?:[cm]?[jt]s)$/;

export function isSuitePath(path: string): boolean {
  return path.length <= 255 && SUITE_PATH.test(path) && isSafeRelativePath(path);
}

/** Whether a suite path is a test file Playwright runs (`*.spec.ts`, `*.test.js`, ...). */
export const isSuiteTestFile = (path: string): boolean => TEST_FILE.test(path);
/** Whether a suite path is its Playwright config at the suite's root. */
export const isSuiteConfigFile = (path: string): boolean => CONFIG_FILE.test(path);

/**
 * A suite's files by path: a `playwright.config.ts` (or .js, .mjs, ...) at the root if it has one,
 * its test files, and small fixtures they read (JSON, text). Each path is named in an issue of
 * its own; the limits are on the count and the characters of all files together.
 */
export const SuiteFilesSchema = v.pipe(
  v.record(v.string(), CodeSchema),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const files = dataset.value;
    const paths = Object.keys(files);
    const at = (key: string): [v.ObjectPathItem] => [{ type: 'object', origin: 'value', input: files, key, value: files[key] }];
    for (const path of paths) {
      if (!isSuitePath(path)) addIssue({ message: 'must be a relative path of letters, digits, ., _, - and / (no .. or hidden segment, at most 255 characters)', path: at(path) });
    }
    if (paths.length > MAX_SUITE_FILES) addIssue({ message: `must hold at most ${MAX_SUITE_FILES} files` });
    const total = paths.reduce((sum, p) => sum + (files[p]?.length ?? 0), 0);
    if (total > MAX_SUITE_CHARACTERS) addIssue({ message: `must hold at most ${MAX_SUITE_CHARACTERS.toLocaleString('en-US')} characters in all (it holds ${total.toLocaleString('en-US')})` });
    if (!paths.some(isSuiteTestFile)) addIssue({ message: 'must hold at least one test file (*.spec.ts, *.test.js, ...)' });
    const configs = paths.filter((p) => /(^|\/)playwright\.config\.[cm]?[jt]s$/.test(p));
    for (const config of configs) if (!isSuiteConfigFile(config)) addIssue({ message: 'a Playwright config must be at the suite\'s root', path: at(config) });
    if (configs.length > 1) addIssue({ message: 'must hold at most one playwright.config' });
    // A file's path cannot also be a folder of another file's path.
    const folders = new Set(paths.flatMap((p) => p.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    for (const path of paths) if (folders.has(path)) addIssue({ message: 'is a file and also a folder of other files', path: at(path) });
  }),
);
export type SuiteFiles = v.InferOutput<typeof SuiteFilesSchema>;

const NameListSchema = v.pipe(
  v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(100, 'must be at most 100 characters'))),
  v.maxLength(20, 'must hold at most 20 names'),
);

const GrepSchema = v.optional(
  v.nullable(v.pipe(v.string(), v.maxLength(500, 'must be at most 500 characters'), v.check(compiles, 'must be a valid regular expression'))),
  null,
);

const playwrightEntries = typeEntries({
  files: SuiteFilesSchema,
  // The Playwright projects to run (the config's `projects` by name); empty: all of them.
  projects: v.optional(NameListSchema, () => []),
  // Only the tests whose title matches (`--grep`), and not those that match grepInvert.
  grep: GrepSchema,
  grepInvert: GrepSchema,
  // The whole suite's time limit: at it, every test still running ends and the run is TIMED_OUT.
  globalTimeout: v.optional(integerBetween(10_000, MAX_SUITE_TIMEOUT_MS), 120_000),
  environmentVariables: v.optional(EnvironmentVariablesSchema, () => []),
});

export const PlaywrightCheckCreateSchema = modelObject(playwrightEntries);
export type PlaywrightCheckCreate = v.InferOutput<typeof PlaywrightCheckCreateSchema>;
export const PlaywrightCheckUpdateSchema = modelObject(updateEntries(playwrightEntries));
export type PlaywrightCheckUpdate = v.InferOutput<typeof PlaywrightCheckUpdateSchema>;
export const PlaywrightCheckSchema = v.object(recordEntries(playwrightEntries, 'PLAYWRIGHT'));
export type PlaywrightCheck = v.InferOutput<typeof PlaywrightCheckSchema>;
export const PlaywrightCheckResponseSchema = v.object(responseEntries(playwrightEntries, 'PLAYWRIGHT'));
export type PlaywrightCheckResponse = v.InferOutput<typeof PlaywrightCheckResponseSchema>;
