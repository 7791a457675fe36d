import { isRelativeApiUrl } from '../model/urls.js';

interface KeyValueInput {
  key: string;
  value: string;
}

interface AssertionInput {
  source: string;
  comparison: string;
  target: string;
  property: string;
  regex: string | null;
}

interface BasicAuthInput {
  username: string;
  password: string;
}

/** The parts of an API check's request that a group's apiCheckDefaults complete. */
export interface ApiRequestDefaultsTarget {
  url: string;
  headers: KeyValueInput[];
  queryParameters: KeyValueInput[];
  assertions: AssertionInput[];
  basicAuth: BasicAuthInput | null;
}

export interface ApiCheckDefaultsInput {
  url: string;
  headers: KeyValueInput[];
  queryParameters: KeyValueInput[];
  assertions: AssertionInput[];
  basicAuth: BasicAuthInput;
}

/** The placeholder a member check's url may use for its group's base url (`{{GROUP_BASE_URL}}/users`). */
export const GROUP_BASE_URL_VARIABLE = 'GROUP_BASE_URL';
const GROUP_BASE_URL = new RegExp(`\\{\\{\\s*${GROUP_BASE_URL_VARIABLE}\\s*\\}\\}`, 'g');

/**
 * `base` followed by `relative` with exactly one slash between them. A base with a path keeps it
 * (`https://api.example.com/v1` + `/users` is `.../v1/users`), which is what a person setting a
 * base URL means; URL resolution (RFC 3986) would drop `/v1`.
 */
export function joinBaseUrl(base: string, relative: string): string {
  if (relative.startsWith('?')) return `${base}${relative}`;
  return `${base.replace(/\/+$/, '')}/${relative.replace(/^\/+/, '')}`;
}

/**
 * Entries of both lists, the check's replacing every group entry of a key it sets too (a member
 * overrides a default); a key repeated within one list stays repeated (`?tag=a&tag=b`).
 */
function mergeByKey(groupList: readonly KeyValueInput[], checkList: readonly KeyValueInput[], caseInsensitive: boolean): KeyValueInput[] {
  const norm = (key: string) => (caseInsensitive ? key.toLowerCase() : key);
  const overridden = new Set(checkList.map((e) => norm(e.key)));
  return [...groupList.filter((e) => !overridden.has(norm(e.key))), ...checkList];
}

const assertionKey = (a: AssertionInput) => JSON.stringify([a.source, a.comparison, a.property, a.target, a.regex]);

const hasUser = (auth: BasicAuthInput | null | undefined): auth is BasicAuthInput => !!auth && auth.username !== '';

/**
 * An API check's request as it runs in its group: the group's base url completes a relative url
 * (and fills `{{GROUP_BASE_URL}}`); the group's headers (by name, case-insensitively) and query
 * parameters (by key) apply unless the check sets the same key; the group's assertions are added
 * to the check's; the group's basic auth applies when the check has none. Without defaults the
 * request is answered as it is.
 */
export function mergeApiCheckDefaults<TRequest extends ApiRequestDefaultsTarget>(
  request: TRequest,
  defaults: ApiCheckDefaultsInput | null | undefined,
): TRequest {
  if (!defaults) return request;
  const base = defaults.url.trim();
  let url = request.url;
  if (base !== '') {
    url = url.replace(GROUP_BASE_URL, () => base.replace(/\/+$/, ''));
    if (isRelativeApiUrl(url)) url = joinBaseUrl(base, url);
  }
  const own = new Set(request.assertions.map(assertionKey));
  return {
    ...request,
    url,
    headers: mergeByKey(defaults.headers, request.headers, true),
    queryParameters: mergeByKey(defaults.queryParameters, request.queryParameters, false),
    assertions: [...request.assertions, ...defaults.assertions.filter((a) => !own.has(assertionKey(a)))],
    basicAuth: hasUser(request.basicAuth) ? request.basicAuth : hasUser(defaults.basicAuth) ? { ...defaults.basicAuth } : request.basicAuth,
  };
}
