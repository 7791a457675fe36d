#!/usr/bin/env node
// The `vigil` command of this host: plan and apply the constructs of vigil.config.mjs, migrate the
// store, trigger checks from a deployment pipeline. It builds the same Vigil as the server
// (src/assemble.mjs: store, secret key, runners, account) but whose engine claims only check
// sessions' runs (no scheduled runs, reminders or retention: the server's); alerts of those runs are
// left in the outbox for the server.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { consoleLogger, runCli } from '@vigil/core';

// The host's packages (runners, store) load only for a command that needs them: help is instant.
const host = () => import('../src/assemble.mjs');
let vigil = null;

async function getVigil() {
  const { assembleVigil, hostSettings } = await host();
  vigil ??= assembleVigil(hostSettings(), {
    // VIGIL_LOG_LEVEL=info (or debug) shows what the engine does, on stderr.
    logger: process.env.VIGIL_LOG_LEVEL ? consoleLogger(process.env.VIGIL_LOG_LEVEL) : undefined,
    engine: { kinds: ['session'] },
    alerts: { enabled: false },
  });
  return vigil;
}

/**
 * vigil.config.mjs (or --config, or VIGIL_CONFIG): `export default { account?, project?, constructs }`,
 * or a function (async or not) answering that. Without `account`, the host's own account.
 */
async function loadConfig(path) {
  const file = resolve(path ?? process.env.VIGIL_CONFIG ?? 'vigil.config.mjs');
  let config = {};
  if (existsSync(file)) {
    const mod = await import(pathToFileURL(file).href);
    config = typeof mod.default === 'function' ? await mod.default() : mod.default ?? mod;
    if (typeof config !== 'object' || config === null) throw new Error(`${file} must export an object: { account, project, constructs }`);
  } else if (path !== undefined) {
    throw new Error(`no config file at ${file}`);
  }
  const { hostAccountId, hostSettings } = await host();
  const accountId = config.account ?? config.accountId ?? hostAccountId(hostSettings().stateDir);
  // The account exists from here on, as the server makes it on its first start.
  await (await getVigil()).accounts.ensure(accountId);
  return { accountId, project: config.project, constructs: config.constructs ?? null };
}

const color = Boolean(process.stdout.isTTY) && !('NO_COLOR' in process.env);
const code = await runCli(process.argv.slice(2), {
  vigil: getVigil,
  loadConfig,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  color,
  interactive: Boolean(process.stdout.isTTY),
});
// Sessions are final here; closing stops the engine and releases the store.
if (vigil) await vigil.close().catch((err) => process.stderr.write(`vigil: closing the store failed: ${err.message}\n`));
process.exit(code);
