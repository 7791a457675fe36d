import type { Request, Response, Router } from 'express';
import { hasCode, type ValidationIssue } from '@vigil/core';
import { formBody } from './forms/body.js';
import { formFields, type Posted } from './forms/fields.js';
import {
  addStatusPageIncidentUpdate, formResources, heartbeatPingPath, sendTestAlert, StatusPageIncidentUpdateFormSchema,
  type FormResource,
} from './forms/resources.js';
import { contextOf, layoutOf, sendMessage, wrap, type ConsoleKit } from './kit.js';
import { checkTypesPage, confirmPage, formPage, sectionPage } from './templates-resources.js';

type Group = FormResource['group'];

/** The sections of the navigation other than the check list, and the kinds of resource each holds. */
const SECTIONS: { path: string; title: string; groups: Group[] }[] = [
  { path: '/groups', title: 'Check groups', groups: ['check-group'] },
  { path: '/alert-channels', title: 'Alert channels', groups: ['alert-channel'] },
  { path: '/maintenance-windows', title: 'Maintenance windows', groups: ['maintenance-window'] },
  { path: '/dashboards', title: 'Dashboards', groups: ['dashboard'] },
  { path: '/status-pages', title: 'Status pages', groups: ['status-page', 'status-page-service', 'status-page-incident'] },
];

const HEADINGS: Partial<Record<Group, string>> = {
  'status-page': 'Status pages', 'status-page-service': 'Services', 'status-page-incident': 'Incidents', 'alert-channel': 'Alert channels',
};

const PAGE_SIZE = 100;
const FIRST_FIELDS = ['name', 'header', 'type', 'config', 'request', 'script', 'heartbeat', 'frequency'];

/** How a stored resource is named in a list. */
function titleOf(item: Record<string, unknown>): string {
  for (const k of ['name', 'header', 'title', 'customUrl', 'url']) if (typeof item[k] === 'string' && item[k]) return item[k];
  return `#${String(item.id)}`;
}

function sectionOf(resource: FormResource): string {
  if (resource.group === 'check') return '/';
  if (resource.group === 'alert-subscriptions') return '/alert-channels';
  return SECTIONS.find((s) => s.groups.includes(resource.group))?.path ?? '/';
}

interface FormState {
  values?: unknown;
  issues?: ValidationIssue[];
  posted?: Posted;
  failed?: string;
  status?: number;
}

/**
 * The section lists and the create, edit and delete pages of everything the console edits:
 * check groups, alert channels (with a test alert) and their subscriptions, maintenance windows,
 * dashboards, status pages with their services and incidents, and checks of every installed type.
 * Forms come from the API's own schemas; what the services refuse is shown beside its field.
 */
export function mountResourcePages(router: Router, kit: ConsoleKit, options: { apiPath: string }): void {
  const { vigil } = kit;
  let cached: FormResource[] | undefined;
  const resources = () => (cached ??= formResources(vigil));
  const byKey = (key: string) => resources().find((r) => r.key === key);
  const channelKey = (type: string) => `alert-channel-${type.toLowerCase().replace(/_/g, '-')}`;

  function showForm(req: Request, res: Response, resource: FormResource, mode: 'create' | 'update', id: string | null, state: FormState): void {
    const base = req.baseUrl;
    const form = formFields(resource.createSchema, state.values, state.issues ?? [], { ...resource.formOptions, ...(state.posted ? { posted: state.posted } : {}) });
    // What a resource is comes first (its name, what a check targets, a channel's config); settings after.
    const rank = (name: string) => { const i = FIRST_FIELDS.indexOf(name); return i === -1 ? FIRST_FIELDS.length : i; };
    form.fields = form.fields.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f.name) - rank(b.f.name) || a.i - b.i).map((x) => x.f);
    const ping = mode === 'update' ? heartbeatPingPath(state.values) : null;
    const back = resource.group === 'check' && id ? `${base}/checks/${encodeURIComponent(id)}` : `${base}${sectionOf(resource)}`;
    res.status(state.status ?? 200).type('html').send(formPage({
      layout: layoutOf(kit, req, res, { section: sectionOf(resource) }),
      title: mode === 'create' ? `New ${resource.label}` : `Edit ${resource.label}`,
      heading: mode === 'create' ? `New ${resource.label}` : `Edit ${titleOf((state.values ?? {}) as Record<string, unknown>)}`,
      form,
      failed: state.failed,
      note: ping ? { text: 'Ping this address from the job the check watches:', code: `${req.protocol}://${req.get('host')}${options.apiPath}${ping}` } : null,
      action: `${base}/r/${resource.key}${id ? `/${encodeURIComponent(id)}/edit` : '/new'}`,
      submit: mode === 'create' ? 'Create' : 'Save',
      back,
    }));
  }

  /** The posted form without the CSRF token. */
  const postedOf = (req: Request): Posted => {
    const { _csrf: _t, ...rest } = (req.body ?? {}) as Posted;
    return rest;
  };

  async function submit(req: Request, res: Response, resource: FormResource, id: string | null): Promise<void> {
    const { accountId } = contextOf(res);
    const mode = id ? 'update' : 'create';
    const posted = postedOf(req);
    const stored = id ? await resource.get(vigil, accountId, id) : undefined;
    const { body, issues } = formBody(resource.createSchema, posted, mode);
    const again = (state: FormState) => showForm(req, res, resource, mode, id, { values: stored, posted, status: 400, ...state });
    if (issues.length > 0) return again({ issues });
    let saved: unknown;
    try {
      saved = id ? await resource.update!(vigil, accountId, id, body) : await resource.create!(vigil, accountId, body);
    } catch (err) {
      if (hasCode(err, 'VALIDATION')) return again({ issues: (err as { issues?: ValidationIssue[] }).issues ?? [], failed: (err as Error).message });
      if (hasCode(err, 'CONFLICT') || hasCode(err, 'INVALID_TRANSITION') || hasCode(err, 'FORBIDDEN')) return again({ failed: (err as Error).message, status: 409 });
      throw err;
    }
    const savedId = String((saved as { id?: unknown }).id ?? id ?? '');
    const to = resource.group === 'check' && savedId ? `/checks/${encodeURIComponent(savedId)}` : sectionOf(resource);
    res.redirect(303, `${req.baseUrl}${to}`);
  }

  const resourceOf = (req: Request, res: Response, need: 'create' | 'update' | 'delete'): FormResource | null => {
    const resource = byKey(String(req.params.key));
    if (!resource || !resource[need]) {
      sendMessage(kit, req, res, 404, 'Not found', 'There is no such form in the console.', { href: `${req.baseUrl}/`, label: 'All checks' });
      return null;
    }
    return resource;
  };

  router.get('/checks/new', (req, res) => {
    const types = resources().filter((r) => r.group === 'check').map((r) => ({ href: `${req.baseUrl}/r/${r.key}/new`, label: r.label }));
    res.type('html').send(checkTypesPage({ layout: layoutOf(kit, req, res, { section: '/' }), title: 'New check', types }));
  });

  // A check's page links here: the form of its own type.
  router.get('/checks/:id/edit', wrap(async (req, res) => {
    const check = await vigil.checks.getRecord(contextOf(res).accountId, String(req.params.id));
    const resource = resources().find((r) => r.group === 'check' && r.type === check.checkType);
    if (!resource) return sendMessage(kit, req, res, 404, 'No form for this check', `No ${check.checkType} runner is installed in this process, so its checks cannot be edited here.`);
    res.redirect(302, `${req.baseUrl}/r/${resource.key}/${encodeURIComponent(check.id)}/edit`);
  }));

  for (const section of SECTIONS) {
    router.get(section.path, wrap(async (req, res) => {
      const { accountId } = contextOf(res);
      const page = typeof req.query.page === 'string' && /^\d{1,5}$/.test(req.query.page) ? Math.max(1, Number(req.query.page)) : 1;
      const base = req.baseUrl;
      const blocks = await Promise.all(section.groups.map(async (group) => {
        const kinds = resources().filter((r) => r.group === group);
        const first = kinds[0]!;
        // Every channel type lists the same channels: read them once, each linked to its type's form.
        const query = { page: String(page), limit: String(PAGE_SIZE) };
        const all = group === 'alert-channel' ? (await vigil.alertChannels.list(accountId, query)).items : (await first.list(vigil, accountId, query)).items;
        const rows = (all as Record<string, unknown>[]).map((item) => {
          const key = group === 'alert-channel' ? channelKey(String(item.type)) : first.key;
          const id = encodeURIComponent(String(item.id));
          const resource = byKey(key) ?? first;
          const links = [];
          if (resource.update) links.push({ href: `${base}/r/${key}/${id}/edit`, label: 'Edit' });
          if (group === 'alert-channel') links.push({ href: `${base}/r/alert-subscriptions/${id}/edit`, label: 'Subscriptions' });
          if (group === 'status-page-incident') links.push({ href: `${base}/r/status-page-incident/${id}/update`, label: 'Post an update' });
          if (resource.delete) links.push({ href: `${base}/r/${key}/${id}/delete`, label: 'Delete' });
          const posts = group === 'alert-channel' ? [{ action: `${base}/r/${key}/${id}/test`, label: 'Send a test alert' }] : [];
          const detail = typeof item.customUrl === 'string' ? `/${item.customUrl}` : typeof item.status === 'string' ? item.status : '';
          return { id: String(item.id), title: titleOf(item), kind: String(item.type ?? ''), detail, links, posts };
        });
        return {
          heading: HEADINGS[group] ?? section.title,
          showKind: group === 'alert-channel',
          newLinks: kinds.filter((k) => k.create).map((k) => ({ href: `${base}/r/${k.key}/new`, label: `New ${k.label}` })),
          items: rows,
          nextPage: all.length === PAGE_SIZE ? `${base}${section.path}?page=${page + 1}` : null,
        };
      }));
      const notice = typeof req.query.sent === 'string' ? 'The test alert was delivered.' : undefined;
      res.type('html').send(sectionPage({ layout: layoutOf(kit, req, res, { section: section.path }), title: section.title, blocks, notice }));
    }));
  }

  router.get('/r/:key/new', (req, res) => {
    const resource = resourceOf(req, res, 'create');
    if (resource) showForm(req, res, resource, 'create', null, {});
  });
  router.post('/r/:key/new', wrap(async (req, res) => {
    const resource = resourceOf(req, res, 'create');
    if (resource) await submit(req, res, resource, null);
  }));
  router.get('/r/:key/:id/edit', wrap(async (req, res) => {
    const resource = resourceOf(req, res, 'update');
    if (!resource) return;
    const stored = await resource.get(vigil, contextOf(res).accountId, String(req.params.id));
    showForm(req, res, resource, 'update', String(req.params.id), { values: resource.values(stored) });
  }));
  router.post('/r/:key/:id/edit', wrap(async (req, res) => {
    const resource = resourceOf(req, res, 'update');
    if (resource) await submit(req, res, resource, String(req.params.id));
  }));
  router.get('/r/:key/:id/delete', wrap(async (req, res) => {
    const resource = resourceOf(req, res, 'delete');
    if (!resource) return;
    const stored = (await resource.get(vigil, contextOf(res).accountId, String(req.params.id))) as Record<string, unknown>;
    res.type('html').send(confirmPage({
      layout: layoutOf(kit, req, res, { section: sectionOf(resource) }),
      title: `Delete ${titleOf(stored)}`,
      heading: `Delete ${titleOf(stored)}?`,
      text: resource.group === 'check' ? 'Its results, status and schedule go with it. This cannot be undone.' : 'This cannot be undone.',
      action: `${req.baseUrl}/r/${resource.key}/${encodeURIComponent(String(req.params.id))}/delete`,
      submit: 'Delete',
      back: `${req.baseUrl}${sectionOf(resource)}`,
    }));
  }));
  router.post('/r/:key/:id/delete', wrap(async (req, res) => {
    const resource = resourceOf(req, res, 'delete');
    if (!resource) return;
    await resource.delete!(vigil, contextOf(res).accountId, String(req.params.id));
    res.redirect(303, `${req.baseUrl}${sectionOf(resource)}`);
  }));

  router.post('/r/:key/:id/test', wrap(async (req, res) => {
    const resource = byKey(String(req.params.key));
    if (!resource || resource.group !== 'alert-channel') return sendMessage(kit, req, res, 404, 'Not found', 'There is no such alert channel.');
    const { accountId } = contextOf(res);
    await resource.get(vigil, accountId, String(req.params.id));
    try {
      await sendTestAlert(vigil, accountId, String(req.params.id));
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND') || hasCode(err, 'VALIDATION')) throw err;
      return sendMessage(kit, req, res, 502, 'The test alert was not delivered', err instanceof Error ? err.message : String(err), { href: `${req.baseUrl}/alert-channels`, label: 'Alert channels' });
    }
    res.redirect(303, `${req.baseUrl}/alert-channels?sent=1`);
  }));

  const incidentUpdate = (req: Request, res: Response, state: FormState) => {
    res.status(state.status ?? 200).type('html').send(formPage({
      layout: layoutOf(kit, req, res, { section: '/status-pages' }),
      title: 'Post an incident update',
      heading: 'Post an incident update',
      form: formFields(StatusPageIncidentUpdateFormSchema, undefined, state.issues ?? [], state.posted ? { posted: state.posted } : {}),
      failed: state.failed,
      action: `${req.baseUrl}/r/status-page-incident/${encodeURIComponent(String(req.params.id))}/update`,
      submit: 'Post',
      back: `${req.baseUrl}/status-pages`,
    }));
  };
  router.get('/r/status-page-incident/:id/update', wrap(async (req, res) => {
    await vigil.statusPageIncidents.get(contextOf(res).accountId, String(req.params.id));
    incidentUpdate(req, res, {});
  }));
  router.post('/r/status-page-incident/:id/update', wrap(async (req, res) => {
    const posted = postedOf(req);
    const { body, issues } = formBody(StatusPageIncidentUpdateFormSchema, posted, 'create');
    if (issues.length > 0) return incidentUpdate(req, res, { issues, posted, status: 400 });
    try {
      await addStatusPageIncidentUpdate(vigil, contextOf(res).accountId, String(req.params.id), body);
    } catch (err) {
      if (hasCode(err, 'VALIDATION')) return incidentUpdate(req, res, { issues: (err as { issues?: ValidationIssue[] }).issues ?? [], posted, status: 400, failed: (err as Error).message });
      throw err;
    }
    res.redirect(303, `${req.baseUrl}/status-pages`);
  }));
}
