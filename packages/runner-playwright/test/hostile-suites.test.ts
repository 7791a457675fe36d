import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directoryArtifacts, playwrightRunner, type PlaywrightRunner } from '../src/index.js';
import { CHROMIUM, HAS_CHROMIUM, playwrightJob, processesWith, testsOf } from './support.js';

const signal = () => new AbortController().signal;
const IMPORT = "import { expect, test } from '@playwright/test';\n";

/** Whether a process runs (a zombie nobody reaped does not). */
const running = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()?.[0] !== 'Z';
  } catch {
    return false;
  }
};

/** Every file under `dir`. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));

/**
 * Tests that attach files which are not theirs to give as their trace: a path out of the output
 * folder, a FIFO (which a read would wait on forever), /dev/zero (endless, of size 0), links out of
 * the folder; and a test that leaves processes running outside the suite's process group.
 */
const HOSTILE = {
  'hostile.spec.ts': `${IMPORT}import { execFileSync, spawn } from 'node:child_process';
import { symlinkSync } from 'node:fs';
const trace = (info: any, path: string) => info.attachments.push({ name: 'trace', path, contentType: 'application/zip' });
test('outside', ({}, info) => {
  trace(info, info.project.outputDir + '/../../../../../../../../../etc/hostname');
});
test('fifo', ({}, info) => {
  const path = info.outputPath('trace.zip');
  execFileSync('mkfifo', [path]);
  trace(info, path);
});
test('dev zero', ({}, info) => {
  trace(info, '/dev/zero');
});
test('link out', ({}, info) => {
  const host = info.outputPath('host.zip');
  symlinkSync('/etc/hostname', host);
  trace(info, host);
  const zero = info.outputPath('zero.zip');
  symlinkSync('/dev/zero', zero);
  trace(info, zero);
});
test('leaves processes', () => {
  spawn('setsid', ['sleep', '300'], { detached: true, stdio: 'ignore' }).unref();
  const sleeper = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  sleeper.unref();
  throw new Error('folder ' + process.cwd() + ' pid ' + sleeper.pid);
});
`,
};

describe.skipIf(!HAS_CHROMIUM)('playwrightRunner: hostile suites', () => {
  let runner: PlaywrightRunner;
  let artifactsDir: string;
  beforeAll(() => {
    artifactsDir = mkdtempSync(join(tmpdir(), 'vigil-pw-hostile-'));
    runner = playwrightRunner({ executablePath: CHROMIUM, artifacts: directoryArtifacts(artifactsDir) });
  });
  afterAll(async () => {
    await runner.close();
    rmSync(artifactsDir, { recursive: true, force: true });
  });

  it('refuses attachments that are not regular files of the run, ends promptly, and kills the processes a test left outside its group', async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 100);
    const started = Date.now();
    const result = await runner.run(playwrightJob(HOSTILE), signal());
    clearInterval(ticker);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(30_000);
    // The host's event loop went on all along.
    expect(ticks).toBeGreaterThan(elapsed / 100 / 2);
    const tests = testsOf(result.details);
    expect(tests.map((t) => [t.title, t.status])).toEqual([['outside', 'passed'], ['fifo', 'passed'], ['dev zero', 'passed'], ['link out', 'passed'], ['leaves processes', 'failed']]);
    expect(tests.slice(0, 4).every((t) => t.artifacts.length === 0)).toBe(true);
    const errors = result.details!.artifactErrors as string[];
    expect(errors).toEqual([
      "test-1-trace.zip was not stored: it is outside the run's output folder",
      'test-2-trace.zip was not stored: it is not a regular file',
      "test-3-trace.zip was not stored: it is outside the run's output folder",
      "test-4-trace.zip was not stored: it is outside the run's output folder",
      "test-5-trace.zip was not stored: it is outside the run's output folder",
    ]);
    // Nothing of the host's files was kept.
    const hostname = readFileSync('/etc/hostname');
    expect(filesUnder(artifactsDir).filter((f) => statSync(f).size === hostname.length)).toEqual([]);
    // The processes a test started in sessions of their own are gone with the run, and its folder.
    const [, dir, pid] = /folder (\S+) pid (\d+)/.exec(tests[4]!.error!)!;
    expect(processesWith(dir!)).toEqual([]);
    expect(running(Number(pid))).toBe(false);
  }, 60_000);

  it('refuses a report past 20 MB (a test that printed too much) with a clear failure', async () => {
    const files = { 'loud.spec.ts': `${IMPORT}test('loud', () => {\n  const mb = 'x'.repeat(1024 * 1024);\n  for (let i = 0; i < 22; i++) process.stdout.write(mb);\n});\n` };
    const result = await runner.run(playwrightJob(files), signal());
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER' });
    expect(result.errorMessage).toMatch(/^Playwright's report \(2\d MB\) is past the limit of 20 MB and was not read/);
  }, 60_000);

  it('lists at most 500 tests, the failing ones kept, and counts the rest', async () => {
    // Tests of one file (a repeatEach would start a worker for each repeat), without traces.
    const files = {
      'many.spec.ts': `${IMPORT}test.use({ trace: 'off' });\nfor (let i = 0; i < 509; i++) test('steady ' + i, () => {});\ntest('last fails', () => {\n  expect(1).toBe(2);\n});\n`,
    };
    const result = await runner.run(playwrightJob(files), signal());
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    const tests = testsOf(result.details);
    expect(tests).toHaveLength(500);
    expect(result.details).toMatchObject({ testsOmitted: 10, stats: { passed: 509, failed: 1 } });
    expect(tests.filter((t) => t.status === 'failed').map((t) => t.title)).toEqual(['last fails']);
  }, 60_000);
});
