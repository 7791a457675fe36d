/**
 * The published packages as a user gets them: every package packed as npm publishes it, then
 * installed from the tarballs into fresh apps outside this workspace (under the OS temp dir), with
 * what a host installs beside them (express, sqlite3, reflect-metadata, tsyringe, and typescript
 * with the @types for the TypeScript host). Three hosts embed Vigil as the README's "Embedding
 * Vigil" shows it, each on a SQLite file in its own folder: an ES-module host (app.mjs), a CommonJS
 * host (app.cjs), and a TypeScript host with a tsyringe class (strict, skipLibCheck false,
 * nodenext; a CommonJS module of it requires every package, so the .d.cts files are checked too),
 * compiled with the installed tsc. For each: a TCP check made through the HTTP API is
 * triggered and read back as passing, `npx vigil plan` / `apply` sync a check declared in its config
 * file (vigil.config.mjs / .cjs / .ts), and SIGTERM ends it with code 0.
 *
 * One install for all three: sqlite3 compiles from source where no prebuilt binary is reachable
 * (over a minute of one core, more on a busy machine), so the apps are three folders of one temp
 * root that holds the only node_modules. Each folder has its own package.json ("type": module or
 * commonjs) and Node resolves the packages from the parent's node_modules, exactly as it would from
 * its own, and `npx` finds the `vigil` and `tsc` bins there the same way (`--no`: never from the
 * registry).
 * Installing three times would triple the compile for no difference in what is tested. The
 * install lets node-gyp use every core (JOBS=max), and the TypeScript host compiles while the
 * ES-module and CommonJS hosts are tested: two to four minutes in all on a two-core machine,
 * depending on what else runs (the install is most of it; the hooks allow far more).
 *
 * The packages are built when this runs (npm test builds first); packing ignores the prepack
 * script, so nothing is rebuilt. npm and the apps run with the npm_* and vitest variables of this
 * process removed, as from a user's shell.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(repo, 'test', 'support', 'packed-apps');
const PACKAGES = ['core', 'storage-knex', 'http-express-adapter', 'runner-tcp', 'runner-http', 'runner-dns', 'runner-icmp', 'runner-playwright', 'runner-browser', 'alert-channels', 'cli', 'console'];
/** What a host installs beside the tarballs, in the ranges the packages' peers and the workspace use. */
const HOST_DEPENDENCIES = ['express@^5.1.0', 'sqlite3@^5.1.7', 'reflect-metadata@^0.2.2', 'tsyringe@^4.10.0', 'typescript@~5.9.3', '@types/express@^5.0.6', '@types/node@^20.19.0', '@playwright/test@^1.65.1'];

interface App { kind: 'esm' | 'cjs' | 'ts'; main: string; config: string }
const APPS: App[] = [
  { kind: 'esm', main: 'app.mjs', config: 'vigil.config.mjs' },
  { kind: 'cjs', main: 'app.cjs', config: 'vigil.config.cjs' },
  { kind: 'ts', main: 'dist/src/server.js', config: 'vigil.config.ts' },
];

// The host's secrets, the same on every start of every app (each app has its own store).
const SECRETS = {
  VIGIL_SECRET_KEY: randomBytes(32).toString('hex'),
  VIGIL_ACCOUNT_ID: randomUUID(),
  VIGIL_API_KEY: `vgl_${randomBytes(32).toString('base64url')}`,
};
const INSTALL_MS = 10 * 60_000;
const STEP_MS = 2 * 60_000;
/** How long an app may take to end after SIGTERM: the requirement under test. */
const SIGTERM_BOUND_MS = 5_000;

let root = '';
let service: net.Server | undefined;
let servicePort = 0;
let compiled: Promise<Ran> | undefined;
const running = new Map<App['kind'], Running>();

/** This process's environment without npm's and vitest's variables, as a user's shell has it. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|vitest|VITE_|NODE_OPTIONS$|NODE_ENV$|NODE_V8_COVERAGE$|INIT_CWD$)/i.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

interface Ran { code: number | null; stdout: string; stderr: string }

/** Runs a command to its end, answering its exit code and output (never throws on a failing code). */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = userEnv()): Promise<Ran> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const describeRan = (what: string, r: Ran) => `${what} exited with ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

beforeAll(async () => {
  service = net.createServer((socket) => socket.end()).listen(0, '127.0.0.1');
  await once(service, 'listening');
  servicePort = (service.address() as net.AddressInfo).port;

  root = mkdtempSync(join(tmpdir(), 'vigil-packed-apps-'));
  const tarballs = join(root, 'tarballs');
  mkdirSync(tarballs);
  const packed = await Promise.all(PACKAGES.map(async (name) => {
    const r = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tarballs, '-w', `packages/${name}`], repo, process.env);
    if (r.code !== 0) throw new Error(describeRan(`npm pack -w packages/${name}`, r));
    const [info] = JSON.parse(r.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    // A dist that another build is rewriting at this moment packs without some of its files.
    const files = new Set(info!.files.map((f) => f.path));
    const missing = shippedPaths(name).filter((path) => !files.has(path));
    if (missing.length > 0) throw new Error(`@vigil/${name} packed without ${missing.join(', ')}: build the packages (npm run build) and run again`);
    return `./tarballs/${info!.filename}`;
  }));

  // sqlite3's install script builds it; this npm runs dependency scripts that allowScripts lists.
  writeFileSync(join(root, 'package.json'), `${JSON.stringify({ name: 'vigil-packed-apps', private: true, allowScripts: { sqlite3: true } }, null, 2)}\n`);
  for (const app of APPS) {
    cpSync(join(fixtures, app.kind), join(root, app.kind), { recursive: true });
    // The TypeScript sources are kept as .txt beside the test (the workspace's own tsc would take them).
    for (const file of listFiles(join(root, app.kind))) {
      if (file.endsWith('.txt')) renameSync(file, file.slice(0, -'.txt'.length));
    }
  }
  // JOBS=max: node-gyp compiles the addon's own files beside sqlite3's one big C file (the same binary).
  const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...packed, ...HOST_DEPENDENCIES], root, userEnv({ JOBS: 'max' }));
  if (installed.code !== 0) throw new Error(describeRan('npm install of the tarballs', installed));
  // The TypeScript host compiles before any host is started: the SIGTERM bound is then measured on
  // a machine that is not also type-checking.
  compiled = run('npx', ['--no', '--', 'tsc', '-p', 'tsconfig.json'], join(root, 'ts')).catch((err: Error) => ({ code: null, stdout: '', stderr: err.stack ?? err.message }));
  await compiled;
}, INSTALL_MS);

afterAll(async () => {
  for (const app of running.values()) {
    if (app.child.exitCode === null && app.child.signalCode === null) app.child.kill('SIGKILL');
  }
  if (service) await new Promise((resolve) => service!.close(resolve));
  await compiled; // never left running in the folder about to go
  if (root) rmSync(root, { recursive: true, force: true });
}, STEP_MS);

/** The files a package's exports map and bin name (its manifest in the workspace). */
function shippedPaths(name: string): string[] {
  const manifest = JSON.parse(readFileSync(join(repo, 'packages', name, 'package.json'), 'utf8')) as { exports: unknown; bin?: Record<string, string> };
  const targets = (value: unknown): string[] =>
    typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(targets) : [];
  return [...targets(manifest.exports), ...Object.values(manifest.bin ?? {})].map((path) => path.replace(/^\.\//, ''));
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]));
}

interface Running { child: ChildProcess; output: () => string; port: number; exit: Promise<string> }

/** Starts an app with `node` in its folder and waits for it to print the port it listens on. */
async function start(app: App): Promise<Running> {
  const child = spawn(process.execPath, [app.main], { cwd: join(root, app.kind), env: userEnv(SECRETS), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exit = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`)));
  const entry: Running = { child, output: () => output, port: 0, exit };
  running.set(app.kind, entry);
  entry.port = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /\{"listening":(\d+)\}/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exit.then((how) => reject(new Error(`the ${app.kind} host ended (${how}) before it listened:\n${output}`)));
  });
  return entry;
}

interface Answer { status: number; body: any; text: string }

/** A call of the app's API with its key, as curl makes it. */
async function api(port: number, method: string, path: string, body?: object): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}/api${path}`, {
    method,
    headers: {
      authorization: `Bearer ${SECRETS.VIGIL_API_KEY}`,
      'x-service-account': SECRETS.VIGIL_ACCOUNT_ID,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** `npx vigil <args>` in the app's folder, with the host's secrets and the service's port. */
function vigilCommand(app: App, args: string[]): Promise<Ran> {
  return run('npx', ['--no', '--', 'vigil', ...args], join(root, app.kind), userEnv({ ...SECRETS, SERVICE_PORT: String(servicePort) }));
}

/** The steps every host goes through, in order (they build on each other: one app process, one store). */
function hostSuite(app: App) {
  describe(`the ${app.kind} host`, () => {
    const host = () => {
      const entry = running.get(app.kind);
      if (!entry?.port) throw new Error(`the ${app.kind} host did not start`);
      return entry;
    };

    it('starts on a SQLite file in its folder and listens on 127.0.0.1', async () => {
      const { port } = await start(app);
      expect(port).toBeGreaterThan(0);
      // The key it ensured on start authenticates; a wrong one does not.
      expect((await api(port, 'GET', '/v1/checks')).status).toBe(200);
      const wrong = await fetch(`http://127.0.0.1:${port}/api/v1/checks`, { headers: { authorization: 'Bearer vgl_wrong', 'x-service-account': SECRETS.VIGIL_ACCOUNT_ID } });
      expect(wrong.status).toBe(401);
      // The console signs in with the same pair, and serves uPlot from the installed package.
      const signIn = await fetch(`http://127.0.0.1:${port}/console/sign-in`);
      expect(signIn.status).toBe(200);
      const uplot = /src="(\/console\/assets\/uplot\.[0-9a-f]{12}\.js)"/.exec(await signIn.text());
      expect(uplot).not.toBeNull();
      const asset = await fetch(`http://127.0.0.1:${port}${uplot![1]}`);
      expect(asset.status).toBe(200);
      expect(await asset.text()).toContain('uPlot');
    }, STEP_MS);

    it('runs a TCP check made through the HTTP API, and its result reads back as passing', async () => {
      const { port } = host();
      const made = await api(port, 'POST', '/v1/checks/tcp', { name: `${app.kind} host: service port`, request: { hostname: '127.0.0.1', port: servicePort }, frequency: 1440 });
      expect(made.status, made.text).toBe(201);
      const triggered = await api(port, 'POST', '/v1/check-sessions/trigger', { target: { checkId: [made.body.id] } });
      expect(triggered.status, triggered.text).toBe(201);
      const sessionId = triggered.body.sessions[0].checkSessionId as string;
      // Long-polls until the session is final (408 means it still runs).
      let session: Answer;
      do session = await api(port, 'GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=30`);
      while (session.status === 408);
      expect(session.status, session.text).toBe(200);
      expect(session.body.status, session.text).toBe('PASSED');
      const results = await api(port, 'GET', `/v1/check-results/${made.body.id}`);
      expect(results.status, results.text).toBe(200);
      expect(results.body.length, results.text).toBeGreaterThan(0);
      expect(results.body[0], results.text).toMatchObject({ checkId: made.body.id, checkType: 'TCP', hasFailures: false });
    }, STEP_MS);

    it(`plans and applies the check declared in ${app.config} with npx vigil`, async () => {
      const name = `${app.kind} host: service port (as code)`;
      const plan = await vigilCommand(app, ['plan']);
      expect(plan.code, describeRan('vigil plan', plan)).toBe(0);
      expect(plan.stdout).toMatch(new RegExp(`^ {2}\\+ Check +service-port +TCP +"${name.replace(/[()]/g, '\\$&')}"$`, 'm'));
      expect(plan.stdout).toContain('1 to create, 0 to update, 0 to delete, 0 unchanged.');
      const apply = await vigilCommand(app, ['apply']);
      expect(apply.code, describeRan('vigil apply', apply)).toBe(0);
      const checks = await api(host().port, 'GET', '/v1/checks');
      expect(checks.status, checks.text).toBe(200);
      expect(checks.body, checks.text).toEqual(expect.arrayContaining([
        expect.objectContaining({ name, checkType: 'TCP', request: expect.objectContaining({ hostname: '127.0.0.1', port: servicePort }) }),
      ]));
      const again = await vigilCommand(app, ['plan']);
      expect(again.stdout, describeRan('vigil plan after apply', again)).toContain('No changes: 1 resource matches its construct.');
    }, STEP_MS);

    it(`ends with code 0 within ${SIGTERM_BOUND_MS / 1000} s of SIGTERM`, async () => {
      const { child, exit, output } = host();
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<string>((resolve) => (timer = setTimeout(resolve, SIGTERM_BOUND_MS, 'still running')));
      const how = await Promise.race([exit, bound]);
      clearTimeout(timer);
      expect(how, `the ${app.kind} host after SIGTERM (${SIGTERM_BOUND_MS} ms allowed):\n${output()}`).toBe('code 0');
    }, STEP_MS);
  });
}

describe('the packed packages installed into fresh apps', () => {
  hostSuite(APPS[0]!);
  hostSuite(APPS[1]!);
  it('compile in a TypeScript host (strict, skipLibCheck false, nodenext; ESM and CommonJS modules) with its installed tsc', async () => {
    if (!compiled) throw new Error('the install did not finish');
    const r = await compiled;
    expect(r.code, describeRan('tsc', r)).toBe(0);
  }, STEP_MS);

  hostSuite(APPS[2]!);
});
