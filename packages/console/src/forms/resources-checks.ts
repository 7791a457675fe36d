import {
  BUILTIN_CHECK_TYPES, CheckCreateSchemas, CheckUpdateSchemas, type BuiltinCheckType, type CheckTypeDefinition, type Vigil,
} from '@vigil/core';
import type { FormOptions } from './fields.js';
import type { FormResource } from './resource-types.js';

const LABELS: Record<BuiltinCheckType, string> = {
  TCP: 'TCP check', API: 'API check', BROWSER: 'Browser check', HEARTBEAT: 'Heartbeat check', DNS: 'DNS check', URL: 'URL monitor',
  ICMP: 'ICMP check', MULTI_STEP: 'Multi-step check', PLAYWRIGHT: 'Playwright check suite',
};

const SLUGS: Record<BuiltinCheckType, string> = {
  TCP: 'tcp', API: 'api', BROWSER: 'browser', HEARTBEAT: 'heartbeat', DNS: 'dns', URL: 'url', ICMP: 'icmp', MULTI_STEP: 'multistep',
  PLAYWRIGHT: 'playwright',
};

const OPTIONS: Partial<Record<BuiltinCheckType, FormOptions>> = {
  BROWSER: { kinds: { script: 'code' }, help: { script: 'The script the browser runs (JavaScript with Puppeteer or Playwright).' } },
  MULTI_STEP: { kinds: { script: 'code' } },
  HEARTBEAT: { help: { heartbeat: 'The check fails when no ping arrives within the period plus the grace.' } },
};

/**
 * The installed check types: HEARTBEAT (core runs it itself), every other built-in type whose
 * runner is registered, and the types plugins added.
 */
export function installedCheckTypes(vigil: Vigil): string[] {
  const builtin = BUILTIN_CHECK_TYPES.filter((t) => t === 'HEARTBEAT' || vigil.deps.runners.has(t));
  return [...builtin, ...vigil.checks.pluginCheckTypes.keys()];
}

/** Where a heartbeat check is pinged, under the HTTP adapter's mount point (`/ping/{token}`); null for another check. */
export function heartbeatPingPath(check: unknown): string | null {
  const c = check as { checkType?: string; heartbeat?: { pingToken?: string } } | null;
  return c?.checkType === 'HEARTBEAT' && typeof c.heartbeat?.pingToken === 'string' ? `/ping/${encodeURIComponent(c.heartbeat.pingToken)}` : null;
}

function checkResource(
  checkType: string,
  slug: string,
  label: string,
  schemas: Pick<FormResource, 'createSchema' | 'updateSchema'>,
  formOptions: FormOptions,
): FormResource {
  const ofType = async (vigil: Vigil, accountId: string, id: unknown) => vigil.checks.get(accountId, id, checkType);
  return {
    key: `check-${slug}`,
    label,
    group: 'check',
    type: checkType,
    ...schemas,
    formOptions,
    values: (record) => record,
    // The checks' list is one list of every type: a page holds this type's checks of that page.
    list: async (vigil, accountId, query) => {
      const page = await vigil.checks.list(accountId, query ?? {});
      return { items: page.items.filter((c) => c.checkType === checkType) };
    },
    get: ofType,
    create: (vigil, accountId, body) => vigil.checks.create(accountId, checkType, body as never),
    update: (vigil, accountId, id, body) => vigil.checks.update(accountId, id, body as never, { checkType }),
    delete: async (vigil, accountId, id) => {
      await ofType(vigil, accountId, id);
      await vigil.checks.delete(accountId, id);
    },
  };
}

/** A form resource for each installed check type. */
export function checkResources(vigil: Vigil): FormResource[] {
  return installedCheckTypes(vigil).map((checkType) => {
    if ((BUILTIN_CHECK_TYPES as readonly string[]).includes(checkType)) {
      const t = checkType as BuiltinCheckType;
      return checkResource(t, SLUGS[t], LABELS[t], { createSchema: CheckCreateSchemas[t], updateSchema: CheckUpdateSchemas[t] }, OPTIONS[t] ?? {});
    }
    const d = vigil.checks.pluginCheckTypes.get(checkType) as CheckTypeDefinition;
    return checkResource(d.checkType, d.slug, `${d.label} check`, { createSchema: d.createSchema, updateSchema: d.updateSchema }, {});
  });
}
