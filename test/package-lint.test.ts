import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The published tarballs, as npm packs them, held to publint and "Are the types wrong?", and to
// their manifests: every package a shipped file (code or declarations) imports is one it declares.
// The packages are built already (npm test builds before it runs the tests): packing ignores
// the prepack script, so nothing is rebuilt here.

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['core', 'storage-knex', 'http-express-adapter', 'runner-tcp', 'runner-http', 'runner-dns', 'runner-icmp', 'runner-playwright', 'runner-browser', 'alert-channels', 'cli', 'console'];

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

/**
 * Modules a package's shipped files name without declaring them, by package, each with the reason.
 * Anything else a file imports or requires must be a dependency or peer dependency of the package.
 */
const ACCEPTED_UNDECLARED: Record<string, Record<string, string>> = {
  'runner-browser': {
    // dist/script-worker.cjs bundles ws (through puppeteer-core), which requires these inside try/catch.
    bufferutil: "ws's optional native add-on, required inside try/catch in the bundled script worker",
    'utf-8-validate': "ws's optional native add-on, required inside try/catch in the bundled script worker",
    expect: 'child/worker.cjs requires it when the runner runs from the sources; the packed package runs dist/script-worker.cjs, which bundles it',
    puppeteer: "named in a comment of child/worker.cjs (a script's require('puppeteer') gets puppeteer-core)",
  },
  core: {
    '@playwright/test': "named in the text of a suite file that testing's playwrightCheckFixture holds (a string, never imported)",
  },
  'runner-http': {
    expect: 'child/multistep-worker.cjs requires it when the runner runs from the sources; the packed package runs dist/multistep-worker.cjs, which bundles it',
  },
};

/** Every module specifier a JavaScript or declaration file names: import/export from, import(), require(). */
function moduleSpecifiers(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)(['"])([^'"\s$`]+)\1/g)) found.add(m[2]!);
  return [...found];
}

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`); null for a relative path or a builtin. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return builtinModules.includes(name) ? null : name;
}

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

describe('the scan for the modules a file names', () => {
  it('finds static, side-effect, type and dynamic imports, re-exports and requires, by package', () => {
    const text = [
      "import * as v from 'valibot';", "import { DependencyContainer } from 'tsyringe';", "import 'reflect-metadata';",
      'export { x } from "@scope/pkg/sub";', "type T = import('undici').Agent;", 'const a = require("croner");',
      "const b = await import('node:fs');", "import { join } from 'path';", "import { y } from './chunk-abc.mjs';",
    ].join('\n');
    expect(moduleSpecifiers(text).map(packageOf).filter(Boolean)).toEqual(['valibot', 'tsyringe', 'reflect-metadata', '@scope/pkg', 'undici', 'croner']);
  });
});

/** Names a declaration file exports (`export { a, b as c, type d }`, with or without `from`). */
function exportedNames(text: string): Set<string> {
  return new Set([...text.matchAll(/^export \{([^}]*)\}/gm)].flatMap((m) => m[1]!.split(',').map((s) => s.trim().replace(/^type /, '').split(/\s+as\s+/).pop()!)));
}

/** Names of the interfaces and type aliases a declaration file holds (rollup's `$1` suffix dropped). */
function declaredTypes(text: string): Set<string> {
  return new Set([...text.matchAll(/^(?:declare )?(?:interface|type) ([\w$]+)/gm)].map((m) => m[1]!.replace(/\$\d+$/, '')));
}

it("core's root declarations export every valibot type its bundled declarations hold, for dependents' declarations to name", () => {
  const valibot = readFileSync(join(root, 'node_modules', 'valibot', 'dist', 'index.d.mts'), 'utf8');
  const valibotTypes = [...exportedNames(valibot)].filter((n) => declaredTypes(valibot).has(n));
  const dist = join(root, 'packages', 'core', 'dist');
  const declarations = packed.get('core')!.files.filter((f) => f.endsWith('.d.mts')).map((f) => readFileSync(join(root, 'packages', 'core', f), 'utf8'));
  const held = new Set(declarations.flatMap((text) => [...declaredTypes(text)]));
  expect(declarations.join('\n')).not.toMatch(/from ['"]valibot['"]/);
  const rootExports = exportedNames(readFileSync(join(dist, 'index.d.mts'), 'utf8'));
  const missing = valibotTypes.filter((n) => held.has(n) && !rootExports.has(n));
  expect(missing, `add to packages/core/src/model/index-declarations.ts: ${missing.join(', ')}`).toEqual([]);
});

describe.each(PACKAGES)('the packed @vigil/%s', (name) => {
  const pkg = () => packed.get(name)!;

  it('ships its built entry points, README, CHANGELOG and MIT license', () => {
    const files = pkg().files;
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'dist/index.mjs', 'dist/index.cjs', 'dist/index.d.mts', 'dist/index.d.cts']));
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });

  it('names only the modules it declares (dependencies, peer dependencies) and node builtins', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as {
      name: string; dependencies?: Record<string, string>; peerDependencies?: Record<string, string>; optionalDependencies?: Record<string, string>;
    };
    const declared = new Set([manifest.name, ...Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.optionalDependencies })]);
    const accepted = ACCEPTED_UNDECLARED[name] ?? {};
    const files = pkg().files.filter((f) => /\.(d\.mts|d\.cts|mjs|cjs|js)$/.test(f));
    expect(files.filter((f) => /\.d\.[cm]ts$/.test(f)).length).toBeGreaterThan(0);
    const named = files.flatMap((file) => moduleSpecifiers(readFileSync(join(root, 'packages', name, file), 'utf8'))
      .map(packageOf)
      .filter((module): module is string => module !== null)
      .map((module) => ({ file, module })));
    const undeclared = [...new Set(named.filter(({ module }) => !declared.has(module) && !(module in accepted)).map(({ file, module }) => `${file} names ${module}`))];
    expect(undeclared, undeclared.join('\n')).toEqual([]);
    // An accepted exception that no file needs any more goes.
    expect(Object.keys(accepted).filter((module) => !named.some((n) => n.module === module))).toEqual([]);
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
