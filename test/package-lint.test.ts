import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The published tarballs, as npm packs them, held to publint and "Are the types wrong?".
// The packages are built already (npm test builds before it runs the tests): packing ignores
// the prepack script, so nothing is rebuilt here.

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['core', 'storage-knex', 'http-express-adapter', 'runner-tcp', 'runner-http', 'runner-browser', 'alert-channels', 'cli'];

/**
 * Entry points attw should not treat as typed modules: core's `./child/fence.cjs` is plain CommonJS
 * that the runners' child processes load first; the runners only resolve its path, never import it.
 */
const EXCLUDED_ENTRYPOINTS: Record<string, string[]> = { core: ['./child/fence.cjs'] };

/** publint suggestions that do not apply, by package, each with the reason. */
const ACCEPTED_SUGGESTIONS: Record<string, Record<string, string>> = {
  // The main entry imports 'reflect-metadata' for its side effect (the metadata API tsyringe needs),
  // so core may not declare "sideEffects": false.
  core: { USE_SIDE_EFFECTS: 'core imports reflect-metadata for its side effect' },
};

interface Packed { name: string; tarball: Uint8Array; files: string[] }

let dir: string;
const packed = new Map<string, Packed>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vigil-pack-'));
  await Promise.all(PACKAGES.map(async (name) => {
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir, '-w', `packages/${name}`], { cwd: root });
    const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    packed.set(name, { name, tarball: new Uint8Array(readFileSync(join(dir, info!.filename))), files: info!.files.map((f) => f.path) });
  }));
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each(PACKAGES)('the packed @vigil/%s', (name) => {
  const pkg = () => packed.get(name)!;

  it('ships its built entry points, README, CHANGELOG and MIT license', () => {
    const files = pkg().files;
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'dist/index.mjs', 'dist/index.cjs', 'dist/index.d.mts', 'dist/index.d.cts']));
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });

  it('passes publint', async () => {
    const { tarball } = pkg();
    const buffer = tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) as ArrayBuffer;
    const { messages, pkg: manifest } = await publint({ pack: { tarball: buffer }, level: 'suggestion' });
    const findings = messages
      .filter((m) => !(m.type === 'suggestion' && m.code in (ACCEPTED_SUGGESTIONS[name] ?? {})))
      .map((m) => `${m.type} ${m.code}: ${formatMessage(m, manifest) ?? JSON.stringify(m)}`);
    expect(findings, findings.join('\n')).toEqual([]);
  });

  it('has types that resolve the same way as its code in every TypeScript resolution mode (attw)', async () => {
    const result = await checkPackage(createPackageFromTarballData(pkg().tarball), { excludeEntrypoints: EXCLUDED_ENTRYPOINTS[name] ?? [] });
    if (result.types === false) throw new Error(`@vigil/${name} ships no types`);
    const problems = result.problems.map((p) => JSON.stringify(p));
    expect(problems, problems.join('\n')).toEqual([]);
    // Every subpath of the exports map is checked, node10 (typesVersions) included.
    const entrypoints = Object.keys(result.entrypoints).filter((entry) => entry !== './package.json');
    const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const excluded = [...(EXCLUDED_ENTRYPOINTS[name] ?? []), './package.json'];
    expect(entrypoints.sort()).toEqual(Object.keys(manifest.exports).filter((entry) => !excluded.includes(entry)).sort());
    for (const entry of entrypoints) {
      for (const [mode, resolution] of Object.entries(result.entrypoints[entry]!.resolutions)) {
        expect(resolution.resolution?.fileName, `${entry} under ${mode}`).toMatch(/\.d\.[cm]ts$/);
      }
    }
  });
});
