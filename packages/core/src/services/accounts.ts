import { parse } from '../model/parse.js';
import { AlertSettingsSchema, DEFAULT_ALERT_SETTINGS } from '../model/shared.js';
import type { Account } from '../model/account.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found } from './support.js';

export class AccountService {
  constructor(private readonly deps: ServiceDeps) {}

  /** The account with this id, created when missing (with a new id when none is given). */
  async ensure(accountId?: string, name = 'Default account'): Promise<Account> {
    const id = accountId ?? this.deps.ids.uuid();
    const existing = await this.deps.storage.accounts.get(id);
    if (existing) return existing;
    return this.deps.storage.accounts.insert({
      id,
      name,
      alertSettings: structuredClone(DEFAULT_ALERT_SETTINGS),
      created_at: nowIso(this.deps),
      updated_at: null,
    });
  }

  async get(accountId: string): Promise<Account> {
    return found(await this.deps.storage.accounts.get(accountId), 'Account');
  }

  /** The account-level alert settings, which apply to checks with useGlobalAlertSettings. */
  async updateAlertSettings(accountId: string, body: unknown): Promise<Account> {
    const account = await this.get(accountId);
    const alertSettings = parse(AlertSettingsSchema, body);
    return this.deps.storage.accounts.update({ ...account, alertSettings, updated_at: nowIso(this.deps) });
  }
}
