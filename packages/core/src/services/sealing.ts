import type { ApiRequest } from '../model/api-request.js';
import { ALERT_CHANNEL_TYPES, SECRET_CONFIG_FIELDS, type AlertChannel, type AlertChannelType } from '../model/alert-channel.js';
import type { AlertTransport } from '../ports/alert-transport.js';
import type { SecretBox } from '../ports/secret-box.js';
import { MASKED } from './masking.js';
import { isCredentialHeader } from '../runner-kit/credential-headers.js';

/**
 * Credentials that are not flagged secret by their owner, sealed at rest and masked in responses:
 * a webhook's header values, a chat channel's URL (the URL is its credential), an API check's
 * header values and basic-auth password, and those of a group's apiCheckDefaults. What a response shows masked is what a client may send
 * back: the stored value is kept for it.
 *
 * Values stored before they were sealed read as they are (`open` leaves them) and are sealed on
 * their next write.
 */

/** A URL that is a credential as a response shows it: its scheme and host, the rest masked. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/${MASKED}`;
  } catch {
    return MASKED;
  }
}

/** The value opened when this box sealed it; a value stored before sealing is taken as it is. */
export function openValue(box: SecretBox, value: string): string {
  return box.isSealed(value) ? box.decrypt(value) : value;
}

/** A box for a caller that has none: it cannot tell a sealed value, so every value reads masked. */
export const UNOPENED: SecretBox = {
  encrypt: () => {
    throw new Error('This box seals nothing');
  },
  decrypt: () => MASKED,
  isSealed: () => true,
};

const sealValue = (box: SecretBox, value: string) => (value === '' || box.isSealed(value) ? value : box.encrypt(value));

/** Channel config fields whose value is a URL that is itself the credential. */
export const CREDENTIAL_URL_FIELDS: Readonly<Record<string, readonly string[]>> = { CHAT: ['url'], CHAT_APP: ['url'] };

/** Key/value lists of a channel config whose every value is sealed (a locked entry of any list is too). */
const SEALED_CONFIG_LISTS: Readonly<Record<string, readonly string[]>> = { WEBHOOK: ['headers'] };

type Entry = { key: string; value: string; locked?: boolean };
type Config = Record<string, unknown>;

/** Whether a response masks an entry of a channel's list: a locked one, or a header named as a credential. */
function masksEntry(type: string, list: string, entry: Entry): boolean {
  return entry.locked === true || (SEALED_CONFIG_LISTS[type]?.includes(list) === true && isCredentialHeader(entry.key));
}

/**
 * How the key/value lists and credential URLs of one channel type are sealed, opened, masked and
 * given back: `lists` are those whose locked entries are secret (LOCKED_CONFIG_LISTS of the type).
 */
export class ChannelCredentials {
  constructor(private readonly type: string, private readonly lists: readonly string[], private readonly box: SecretBox) {}

  private mapEntries(config: Config, fn: (list: string, entry: Entry, i: number) => Entry): Config {
    const out = { ...config };
    for (const list of this.lists) {
      const entries = out[list];
      if (!Array.isArray(entries)) continue;
      out[list] = entries.map((entry: Entry, i) => (typeof entry?.value === 'string' && entry.value !== '' ? fn(list, entry, i) : entry));
    }
    return out;
  }

  private mapUrls(config: Config, fn: (value: string) => string): Config {
    const out = { ...config };
    for (const field of CREDENTIAL_URL_FIELDS[this.type] ?? []) if (typeof out[field] === 'string' && out[field] !== '') out[field] = fn(out[field] as string);
    return out;
  }

  seal(config: Config): Config {
    const sealed = this.mapEntries(config, (list, entry) =>
      entry.locked === true || SEALED_CONFIG_LISTS[this.type]?.includes(list) ? { ...entry, value: sealValue(this.box, entry.value) } : entry);
    return this.mapUrls(sealed, (url) => sealValue(this.box, url));
  }

  open(config: Config): Config {
    return this.mapUrls(this.mapEntries(config, (_l, entry) => ({ ...entry, value: openValue(this.box, entry.value) })), (url) => openValue(this.box, url));
  }

  /** An opened config as a response shows it. */
  mask(config: Config): Config {
    const masked = this.mapEntries(config, (list, entry) => (masksEntry(this.type, list, entry) ? { ...entry, value: MASKED } : entry));
    return this.mapUrls(masked, maskUrl);
  }

  /**
   * A config a client sent, with each value it sent back masked replaced by the stored one (an
   * entry of the same key that the response masked, a URL whose masked form it is).
   */
  unmask(config: Config, storedOpened: Config): Config {
    const kept = this.mapEntries(config, (list, entry, i) => {
      if (entry.value !== MASKED) return entry;
      const stored = Array.isArray(storedOpened[list]) ? (storedOpened[list] as Entry[]) : [];
      const before = stored[i]?.key === entry.key ? stored[i] : stored.find((o) => o.key === entry.key);
      return before && before.value !== '' && masksEntry(this.type, list, before) ? { ...entry, value: before.value } : entry;
    });
    for (const field of CREDENTIAL_URL_FIELDS[this.type] ?? []) {
      const before = storedOpened[field];
      if (typeof before === 'string' && before !== '' && kept[field] === maskUrl(before)) kept[field] = before;
    }
    return kept;
  }
}

/** The credentials of an API check's request, or of a group's apiCheckDefaults. */
export type ApiCredentials = Pick<ApiRequest, 'headers' | 'basicAuth'>;

function mapApiRequest<T extends ApiCredentials>(request: T, header: (h: { key: string; value: string }) => string, password: (p: string) => string): T {
  const auth = request.basicAuth;
  return {
    ...request,
    headers: request.headers.map((h) => ({ ...h, value: h.value === '' ? h.value : header(h) })),
    basicAuth: auth && auth.password !== '' ? { ...auth, password: password(auth.password) } : auth,
  };
}

/** An API check's request with every header value and its basic-auth password sealed. */
export function sealApiRequest<T extends ApiCredentials>(request: T, box: SecretBox): T {
  return mapApiRequest(request, (h) => sealValue(box, h.value), (p) => sealValue(box, p));
}

/** An API check's request as it runs: its sealed values opened. */
export function openApiRequest<T extends ApiCredentials>(request: T, box: SecretBox): T {
  return mapApiRequest(request, (h) => openValue(box, h.value), (p) => openValue(box, p));
}

/** An opened API check's request (or a group's apiCheckDefaults) with its credential headers and basic-auth password masked. */
export function maskOpenedApiRequest<T extends ApiCredentials>(request: T): T {
  return mapApiRequest(request, (h) => (isCredentialHeader(h.key) ? MASKED : h.value), () => MASKED);
}

/** A stored API check's request as a response shows it: credential headers and the basic-auth password masked. */
export function maskApiRequest<T extends ApiCredentials>(request: T, box: SecretBox): T {
  return maskOpenedApiRequest(openApiRequest(request, box));
}

/** An API check's request a client sent, with the values it sent back masked replaced by the stored (opened) ones. */
export function unmaskApiRequest<T extends ApiCredentials>(request: T, storedOpened: ApiCredentials): T {
  const stored = new Map(storedOpened.headers.filter((h) => isCredentialHeader(h.key)).map((h) => [h.key.toLowerCase(), h.value]));
  const password = storedOpened.basicAuth?.password ?? '';
  return mapApiRequest(
    request,
    (h) => (h.value === MASKED ? stored.get(h.key.toLowerCase()) ?? h.value : h.value),
    (p) => (p === MASKED && password !== '' ? password : p),
  );
}

/**
 * What a log line about a channel must not show: its secret config fields, and the values of its
 * request headers and query parameters (where receivers take their tokens).
 */
export function channelSecrets(channel: AlertChannel, transport: AlertTransport | undefined): string[] {
  const config = (channel.config ?? {}) as Record<string, unknown>;
  const builtin = (ALERT_CHANNEL_TYPES as readonly string[]).includes(channel.type);
  const fields = builtin ? SECRET_CONFIG_FIELDS[channel.type as AlertChannelType] : transport?.secretFields ?? [];
  const values = fields.map((f) => config[f]);
  for (const list of [config.headers, config.queryParameters]) {
    if (Array.isArray(list)) values.push(...list.map((h) => (h as { value?: unknown } | null)?.value));
  }
  return values.filter((x): x is string => typeof x === 'string');
}
