// Type-check time of a TypeScript host that embeds Vigil, strict and with skipLibCheck false (every
// declaration file the host loads is checked, @vigil/* and what their declarations import), beside
// the same host with skipLibCheck true in the same run (the host's own code alone: the floor).
// Builds nothing: it runs after `npm run build` and reads the packages' dist declarations.
//
// Two apps in a temp folder outside the workspace, whose node_modules points at the workspace's:
// a host of core, storage-knex, the HTTP adapter and runner-tcp as the README embeds them, and an
// app that imports core alone. tsconfig: strict, module/moduleResolution nodenext, lib es2023 (as
// @tsconfig/node20, the base config of Node 20 apps), types ["node"] (core's declarations use Buffer
// and node: modules), legacy decorators as a tsyringe host has them. The host is also checked with
// TypeScript's default lib, which adds the DOM's declarations that a Node app does not use.
// Each configuration is compiled BENCH_ROUNDS times (default 3), alternating, by the workspace's
// tsc with --extendedDiagnostics; the figure is tsc's "Total time", best run of each (other load on
// the machine only ever slows a run down). A type error in either app fails the bench.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_S = 5;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

const HOST = `import 'reflect-metadata';
import express from 'express';
import { closeOnSignals, createVigil } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';
import { vigilRouter } from '@vigil/http-express-adapter';
import { tcpRunner } from '@vigil/runner-tcp';

const vigil = createVigil({
  storage: knexStorage({ client: 'sqlite3', connection: 'vigil.sqlite' }),
  secretKey: process.env.VIGIL_SECRET_KEY!,
  runners: [tcpRunner()],
});
const app = express();
app.use('/api', vigilRouter(vigil));
await vigil.start();
const account = await vigil.accounts.ensure('main');
const check = await vigil.checks.create(account.id, 'TCP', { name: 'orders-db', request: { hostname: 'db.internal', port: 5432 }, frequency: 1 });
await vigil.checks.update(account.id, check.id, { muted: true });
closeOnSignals(vigil, { deadlineMs: 10_000 });
app.listen(3000, '127.0.0.1');
`;

const CORE_ONLY = `import { createVigil } from '@vigil/core';
export const make = createVigil;
`;

const compilerOptions = (skipLibCheck, dom) => ({
  strict: true, skipLibCheck, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true,
  ...(dom ? {} : { lib: ['es2023'] }), types: ['node'], experimentalDecorators: true, emitDecoratorMetadata: true,
});

const dir = mkdtempSync(join(tmpdir(), 'vigil-typecheck-'));
symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'typecheck-host', private: true, type: 'module' }));
writeFileSync(join(dir, 'host.ts'), HOST);
writeFileSync(join(dir, 'core-only.ts'), CORE_ONLY);
for (const [name, app, dom] of [['host', 'host', false], ['core-only', 'core-only', false], ['host-dom', 'host', true]]) {
  for (const skip of [false, true]) {
    writeFileSync(join(dir, `${name}.${skip ? 'skip' : 'full'}.json`), JSON.stringify({ compilerOptions: compilerOptions(skip, dom), files: [`${app}.ts`] }));
  }
}

/** One compile: tsc's total time in seconds, and the types it made. Throws on a type error. */
function compile(project) {
  const r = spawnSync(process.execPath, [tsc, '-p', join(dir, project), '--extendedDiagnostics'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tsc -p ${project} failed:\n${r.stdout}${r.stderr}`);
  const figure = (name) => Number(new RegExp(`^${name}:\\s+([\\d.]+)`, 'm').exec(r.stdout)?.[1]);
  return { total: figure('Total time'), types: figure('Types'), memoryKB: figure('Memory used') };
}

const rows = [];
try {
  for (const [app, what] of [['host', 'host: core, storage-knex, adapter, runner-tcp'], ['core-only', 'app importing @vigil/core alone'], ['host-dom', 'the host, default lib (DOM included)']]) {
    const runs = { full: [], skip: [] };
    for (let r = 0; r < ROUNDS; r++) {
      runs.full.push(compile(`${app}.full.json`));
      runs.skip.push(compile(`${app}.skip.json`));
    }
    const best = (xs) => xs.reduce((a, b) => (b.total < a.total ? b : a));
    rows.push({ app, what, full: best(runs.full), skip: best(runs.skip), all: runs.full.map((x) => x.total) });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const row = ({ what, full, skip, all }) => console.log(
  `${`tsc, ${what}`.padEnd(58)} ${full.total.toFixed(2).padStart(6)} s   baseline ${skip.total.toFixed(2).padStart(6)} s   ratio ${(full.total / skip.total).toFixed(2)}` +
  `   (runs ${all.map((s) => s.toFixed(2)).join(' / ')} s; ${full.types} types, ${Math.round(full.memoryKB / 1024)} MB)`,
);
console.log(`strict, skipLibCheck false vs the same app with skipLibCheck true, best of ${ROUNDS} runs each (tsc --extendedDiagnostics, Total time)`);
console.log('figure                                                      vigil           baseline            vigil/baseline');
for (const r of rows) row(r);
const host = rows.find((r) => r.app === 'host');
console.log(`targets: host type-checks in < ${TARGET_S} s: ${host.full.total < TARGET_S ? 'met' : 'NOT met'}`);
