// How this host builds its Vigil. The server (src/server.mjs) and the `vigil` command (through
// vigil.config.mjs) both use it, so they share one store, one secret key and one account.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { createVigil } from '@vigil/core';
import { registerAlertChannels } from '@vigil/alert-channels';
import { directoryArtifacts, registerBrowserRunner } from '@vigil/runner-browser';
import { registerDnsRunner } from '@vigil/runner-dns';
import { registerHttpRunner } from '@vigil/runner-http';
import { registerIcmpRunner } from '@vigil/runner-icmp';
import { registerPlaywrightRunner } from '@vigil/runner-playwright';
import { registerTcpRunner } from '@vigil/runner-tcp';
import { registerKnexStorage } from '@vigil/storage-knex';

/** Where the host keeps its data: VIGIL_DB (a SQLite file, or a postgres:// URL) and VIGIL_STATE_DIR. */
export function hostSettings(env = process.env) {
  const db = env.VIGIL_DB ?? '.vigil/vigil.sqlite';
  return { db, postgres: /^postgres(ql)?:\/\//.test(db), stateDir: resolve(env.VIGIL_STATE_DIR ?? '.vigil') };
}

/** A value from the environment, else one kept in a file of the state directory (made once). */
export function persisted(stateDir, envName, file, make) {
  if (process.env[envName]) return { value: process.env[envName], made: false };
  const path = join(stateDir, file);
  if (existsSync(path)) return { value: readFileSync(path, 'utf8').trim(), made: false };
  mkdirSync(stateDir, { recursive: true });
  const value = make();
  writeFileSync(path, value, { mode: 0o600 });
  return { value, made: true };
}

/** The host's account: VIGIL_ACCOUNT_ID, else the one made on the first start. */
export function hostAccountId(stateDir) {
  return persisted(stateDir, 'VIGIL_ACCOUNT_ID', 'account-id', () => globalThis.crypto.randomUUID()).value;
}

/**
 * Which addresses each account's checks and alert channels may reach. The host's own account
 * follows VIGIL_TARGET_POLICY: `open` (the default: it monitors the host's own database and
 * routes) or `public-only`. Every other account (a tenant's) is public-only: no loopback,
 * private, link-local or cloud-metadata address, however it is written.
 */
export function accountTargetPolicy(stateDir, env = process.env) {
  const own = env.VIGIL_TARGET_POLICY || 'open';
  if (own !== 'open' && own !== 'public-only') throw new Error(`VIGIL_TARGET_POLICY must be open or public-only, not "${own}"`);
  const ownId = hostAccountId(stateDir);
  return (accountId) => (accountId === ownId ? own : 'public-only');
}

/**
 * The host's Vigil on its store, with its runners and alert channels. `options` are further
 * createVigil options (logger, serves, alerts).
 */
export function assembleVigil(settings, options = {}) {
  const { db, postgres, stateDir } = settings;
  // The key that seals secrets at rest must outlive restarts and stays outside the database.
  const secretKey = persisted(stateDir, 'VIGIL_SECRET_KEY', 'secret.key', () => randomBytes(32).toString('hex')).value;
  if (!postgres) mkdirSync(dirname(db), { recursive: true });
  // Status pages take email subscribers once SMTP_HOST is set; the links in their emails start
  // with VIGIL_PUBLIC_URL. Every process that writes incident updates queues their emails.
  const publicUrl = process.env.VIGIL_PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? 3000}`;
  const targetPolicy = accountTargetPolicy(stateDir);
  return createVigil({ secretKey, statusPageSubscriptions: { publicUrl }, targetPolicy, ...options }, (container) => {
    registerKnexStorage(container, postgres ? { client: 'pg', connection: db } : { client: 'sqlite3', connection: db });
    registerTcpRunner(container);
    registerHttpRunner(container);
    registerDnsRunner(container);
    registerIcmpRunner(container);
    // Browser checks run in Debian's Chromium (PUPPETEER_EXECUTABLE_PATH names another); their
    // screenshots are kept under the state directory.
    registerBrowserRunner(container, { artifacts: directoryArtifacts(join(stateDir, 'artifacts')) });
    registerPlaywrightRunner(container, { artifacts: directoryArtifacts(join(stateDir, 'artifacts')) });
    // WEBHOOK, CHAT, CHAT_APP and paging channels need nothing more; EMAIL needs an SMTP server and
    // SMS/CALL a provider account, each only when its variables are set.
    registerAlertChannels(container, {
      email: process.env.SMTP_HOST
        ? {
            smtp: {
              host: process.env.SMTP_HOST,
              port: Number(process.env.SMTP_PORT ?? 587),
              secure: process.env.SMTP_SECURE === 'true',
              auth: process.env.SMTP_USER ? { user: process.env.SMTP_USER, pass: process.env.SMTP_PASS ?? '' } : undefined,
            },
            from: process.env.SMTP_FROM ?? 'Vigil <alerts@localhost>',
          }
        : undefined,
      phone: process.env.PHONE_ACCOUNT_SID
        ? { accountSid: process.env.PHONE_ACCOUNT_SID, authToken: process.env.PHONE_AUTH_TOKEN ?? '', from: process.env.PHONE_FROM ?? '', baseUrl: process.env.PHONE_BASE_URL }
        : undefined,
    });
  });
}
