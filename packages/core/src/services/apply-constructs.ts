import * as v from 'valibot';
import { isValidationError, ValidationError, type ValidationIssue } from '../errors.js';
import { ALERT_CHANNEL_TYPES, AlertChannelCreateSchema, AlertChannelFlagsSchema } from '../model/alert-channel.js';
import { CheckGroupCreateSchema } from '../model/check-group.js';
import { BUILTIN_CHECK_TYPES, CheckCreateSchemas, isBuiltinCheckType } from '../model/check.js';
import { DashboardCreateSchema } from '../model/dashboard.js';
import { MaintenanceWindowCreateSchema } from '../model/maintenance-window.js';
import { LogicalIdSchema, RESOURCE_KINDS, type ResourceKind } from '../model/managed-resource.js';
import { toValidationIssues } from '../model/parse.js';
import { modelObject } from '../model/shared.js';
import { isRelativeApiUrl } from '../model/urls.js';
import { isConstruct, type Construct } from '../constructs/construct.js';
import type { ServiceDeps } from './deps.js';
import { scriptIssues, SnippetService } from './snippets.js';
import { checkChannelTargetFields, checkTargetFields } from './target-fields.js';
import { policyForAccount } from '../runner-kit/target-policy.js';
import { incidentServiceIssue } from './checks.js';

/** One problem of one construct: `TcpCheck "orders-db"`, `request.port`, `must be between 1 and 65535`. */
export interface ConstructIssue extends ValidationIssue {
  /** The construct, as `TcpCheck "orders-db"` (or `constructs[3]` for a value that is none). */
  construct: string;
}

/** Constructs that are invalid; nothing was written. Each issue names the construct and the field. */
export class ConstructValidationError extends ValidationError {
  readonly constructIssues: ConstructIssue[];

  constructor(issues: ConstructIssue[]) {
    super(issues.map((i) => ({ path: i.path ? `${i.construct}: ${i.path}` : i.construct, message: i.message })));
    this.name = 'ConstructValidationError';
    this.constructIssues = issues;
    const names = new Set(issues.map((i) => i.construct));
    this.message = [
      `${names.size === 1 ? 'A construct is' : `${names.size} constructs are`} invalid; nothing was applied:`,
      ...issues.map((i) => `  ${i.construct}: ${i.path ? `${i.path} ` : ''}${i.message}`),
    ].join('\n');
  }
}

/** A construct validated: its create body (defaults filled in) and what it refers to by logical id. */
export interface DesiredResource {
  construct: Construct;
  label: string;
  kind: ResourceKind;
  logicalId: string;
  /** A check's checkType, a channel's type; null for other kinds. */
  type: string | null;
  /** The parsed create body; groupId and alertChannelSubscriptions are set from the references at apply time. */
  body: Record<string, unknown>;
  /** Top-level fields the construct sets (a reference counts as the field it fills). */
  fields: string[];
  /** Logical id of the CheckGroup construct a check belongs to. */
  group: string | null;
  /** Alert channels by logical id, when the construct names them (`alertChannels`). */
  channels: { logicalId: string; activated: boolean }[] | null;
}

export const resourceKey = (kind: string, logicalId: string) => `${kind}\u0000${logicalId}`;

const REF_FIELDS: Record<string, string> = { group: 'groupId', alertChannels: 'alertChannelSubscriptions' };

/** The keys an object schema (possibly piped) declares; null when it is not one. */
function schemaKeys(schema: v.GenericSchema): string[] | null {
  const entries = (schema as { entries?: Record<string, unknown> }).entries;
  return entries && typeof entries === 'object' ? Object.keys(entries) : null;
}

const CHANNEL_KEYS = ['type', 'config', ...Object.keys(AlertChannelFlagsSchema.entries)];
const isBuiltinChannelType = (type: unknown) => (ALERT_CHANNEL_TYPES as readonly unknown[]).includes(type);

/**
 * Validates every construct before anything is written: logical ids, references, the resource's own
 * schema (the one the API uses), a runner's or transport's extra rules, and what the store must
 * confirm (a group or channel named by numeric id, snippets). All problems are reported at once.
 */
export class ConstructValidator {
  private readonly issues: ConstructIssue[] = [];
  private readonly snippets: SnippetService;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly accountId: string,
  ) {
    this.snippets = new SnippetService(deps);
  }

  private add(construct: string, path: string, message: string): void {
    this.issues.push({ construct, path, message });
  }

  private addAll(construct: string, prefix: string, issues: readonly ValidationIssue[]): void {
    for (const i of issues) this.add(construct, [prefix, i.path].filter(Boolean).join('.'), i.message);
  }

  /** Runs a rule that throws a ValidationError, keeping its issues. */
  private async rule(label: string, fn: () => unknown): Promise<void> {
    try {
      await fn();
    } catch (err) {
      if (!isValidationError(err)) throw err;
      this.addAll(label, '', err.issues);
    }
  }

  /** The valid constructs, and the problems of the others (the caller throws once it has added its own). */
  async validate(input: readonly unknown[]): Promise<{ desired: DesiredResource[]; issues: ConstructIssue[] }> {
    const constructs = this.collect(input);
    const desired: DesiredResource[] = [];
    for (const c of constructs.values()) {
      const d = await this.validateOne(c, constructs);
      if (d) desired.push(d);
    }
    return { desired, issues: this.issues };
  }

  /** The constructs given, and those they refer to as objects; one construct per kind and logical id. */
  private collect(input: readonly unknown[]): Map<string, Construct> {
    const out = new Map<string, Construct>();
    const visit = (value: unknown, where: string) => {
      if (!isConstruct(value)) {
        this.add(where, '', `is not a construct (TcpCheck, CheckGroup, AlertChannel, ...) but ${value === null ? 'null' : typeof value}`);
        return;
      }
      if (!(RESOURCE_KINDS as readonly string[]).includes(value.kind)) {
        this.add(String(value), 'kind', `must be one of ${RESOURCE_KINDS.join(', ')}`);
        return;
      }
      const key = resourceKey(value.kind, String(value.logicalId));
      const seen = out.get(key);
      if (seen === value) return;
      if (seen) {
        this.add(String(value), 'logicalId', `is taken by another ${value.kind} construct (${String(seen)}); logical ids are unique per kind`);
        return;
      }
      out.set(key, value);
      const props = (value.props ?? {}) as Record<string, unknown>;
      if (isConstruct(props.group)) visit(props.group, `${String(value)} group`);
      if (Array.isArray(props.alertChannels)) {
        for (const link of props.alertChannels) {
          const channel = isConstruct(link) ? link : (link as { channel?: unknown } | null)?.channel;
          if (isConstruct(channel)) visit(channel, `${String(value)} alertChannels`);
        }
      }
    };
    if (!Array.isArray(input)) {
      this.add('constructs', '', 'must be an array of constructs');
      return out;
    }
    input.forEach((value, i) => visit(value, `constructs[${i}]`));
    return out;
  }

  private async validateOne(c: Construct, all: Map<string, Construct>): Promise<DesiredResource | null> {
    const label = String(c);
    const before = this.issues.length;
    const idCheck = v.safeParse(LogicalIdSchema, c.logicalId);
    if (!idCheck.success) this.addAll(label, 'logicalId', toValidationIssues(idCheck.issues));
    const props = c.props;
    if (typeof props !== 'object' || props === null || Array.isArray(props)) {
      this.add(label, '', 'props must be an object');
      return null;
    }
    const { group: groupLink, alertChannels: channelLinks, ...rest } = props as Record<string, unknown>;
    const fields = Object.keys(rest).filter((k) => rest[k] !== undefined);
    let group: string | null = null;
    let channels: DesiredResource['channels'] = null;
    if (c.kind === 'Check' && groupLink !== undefined) {
      fields.push(REF_FIELDS.group!);
      if (rest.groupId !== undefined && rest.groupId !== null && groupLink !== null) this.add(label, 'group', 'and groupId are both set; give one of them');
      if (groupLink !== null) group = this.reference(label, 'group', groupLink, 'CheckGroup', all);
    } else if (groupLink !== undefined) {
      this.add(label, 'group', `is not a field of ${c.construct}`);
    }
    if ((c.kind === 'Check' || c.kind === 'CheckGroup') && channelLinks !== undefined) {
      fields.push(REF_FIELDS.alertChannels!);
      if (rest.alertChannelSubscriptions !== undefined) this.add(label, 'alertChannels', 'and alertChannelSubscriptions are both set; give one of them');
      channels = this.channelLinks(label, channelLinks, all);
    } else if (channelLinks !== undefined) {
      this.add(label, 'alertChannels', `is not a field of ${c.construct}`);
    }

    const type = this.typeOf(c);
    const schema = this.schemaOf(label, c, type);
    if (!schema) return null;
    const known = schema.keys;
    if (known) for (const k of fields) if (!known.includes(k) && !Object.values(REF_FIELDS).includes(k)) this.add(label, k, `is not a field of ${c.construct}`);
    const parsed = v.safeParse(schema.schema, rest, { abortEarly: false });
    if (!parsed.success) {
      this.addAll(label, '', toValidationIssues(parsed.issues));
      return null;
    }
    const body = parsed.output as Record<string, unknown>;
    await this.rules(label, c, type, body, group, all);
    if (this.issues.length > before) return null;
    return { construct: c, label, kind: c.kind, logicalId: c.logicalId, type, body, fields: [...new Set(fields)], group, channels };
  }

  private typeOf(c: Construct): string | null {
    if (c.kind === 'Check') return String((c as Construct & { checkType?: unknown }).checkType);
    if (c.kind === 'AlertChannel') return typeof (c.props as { type?: unknown }).type === 'string' ? (c.props as { type: string }).type : null;
    return null;
  }

  /** The create schema of a construct: the API's, or a plugin's for a type it adds. */
  private schemaOf(label: string, c: Construct, type: string | null): { schema: v.GenericSchema; keys: string[] | null } | null {
    switch (c.kind) {
      case 'Check': {
        if (type !== null && isBuiltinCheckType(type)) return { schema: CheckCreateSchemas[type], keys: schemaKeys(CheckCreateSchemas[type]) };
        const definition = type === null ? undefined : this.deps.checkTypes?.get(type);
        if (!definition) {
          const served = [...BUILTIN_CHECK_TYPES, ...(this.deps.checkTypes?.keys() ?? [])];
          this.add(label, 'checkType', `${type} is not a check type this Vigil serves (${served.join(', ')})`);
          return null;
        }
        return { schema: definition.createSchema, keys: schemaKeys(definition.createSchema) };
      }
      case 'CheckGroup':
        return { schema: CheckGroupCreateSchema, keys: schemaKeys(CheckGroupCreateSchema) };
      case 'AlertChannel': {
        if (isBuiltinChannelType(type)) return { schema: AlertChannelCreateSchema, keys: CHANNEL_KEYS };
        const transport = type === null ? undefined : this.deps.transports.get(type);
        if (!transport) {
          const plugins = [...this.deps.transports.keys()].filter((t) => !isBuiltinChannelType(t));
          this.add(label, 'type', `must be one of ${[...ALERT_CHANNEL_TYPES, ...plugins].join(', ')}`);
          return null;
        }
        const schema = modelObject({ type: v.literal(transport.channelType), config: transport.configSchema, ...AlertChannelFlagsSchema.entries });
        return { schema, keys: CHANNEL_KEYS };
      }
      case 'MaintenanceWindow':
        return { schema: MaintenanceWindowCreateSchema, keys: schemaKeys(MaintenanceWindowCreateSchema) };
      case 'Dashboard':
        return { schema: DashboardCreateSchema, keys: schemaKeys(DashboardCreateSchema) };
    }
  }

  /** The rules the services apply on create, beyond the schema, so that they fail here and not half-way. */
  private async rules(label: string, c: Construct, type: string | null, body: Record<string, unknown>, group: string | null, all: Map<string, Construct>): Promise<void> {
    const { storage } = this.deps;
    const subs = body.alertChannelSubscriptions as { alertChannelId: number }[] | undefined;
    if (subs && subs.length > 0) {
      const ids = new Set((await storage.alertChannels.listAll(this.accountId)).map((ch) => ch.id));
      subs.forEach((s, i) => {
        if (!ids.has(s.alertChannelId)) this.add(label, `alertChannelSubscriptions.${i}.alertChannelId`, 'is not an alert channel of this account');
      });
    }
    if (c.kind === 'Check' && type !== null) {
      await this.rule(label, () => this.deps.runners.get(type)?.validate?.(body));
      await this.rule(label, async () => checkTargetFields(await policyForAccount(this.deps.targetPolicy, this.accountId), body, type));
      const groupId = body.groupId as number | null;
      const stored = groupId === null ? null : await storage.checkGroups.get(this.accountId, groupId);
      if (groupId !== null && !stored) this.add(label, 'groupId', 'is not a check group of this account');
      const serviceIssue = await incidentServiceIssue(storage, this.accountId, body.triggerIncident);
      if (serviceIssue) this.add(label, serviceIssue.path, serviceIssue.message);
      const url = type === 'API' ? (body.request as { url?: unknown }).url : null;
      if (typeof url === 'string' && isRelativeApiUrl(url)) {
        const linked = group === null ? null : all.get(resourceKey('CheckGroup', group));
        const base = linked ? (linked.props as { apiCheckDefaults?: { url?: string } }).apiCheckDefaults?.url : stored?.apiCheckDefaults.url;
        if (!base) this.add(label, 'request.url', 'is relative, but its group has no apiCheckDefaults.url to complete it: give a full URL, or a group with one');
      }
    }
    if (c.kind === 'CheckGroup') {
      await this.rule(label, async () => checkTargetFields(await policyForAccount(this.deps.targetPolicy, this.accountId), body, null));
      this.addAll(label, '', scriptIssues({ localSetupScript: body.localSetupScript as string | null, localTearDownScript: body.localTearDownScript as string | null }));
      await this.rule(label, () => this.snippets.checkGroupSnippets(this.accountId, body as never));
    }
    if (c.kind === 'AlertChannel' && type !== null) await this.rule(label, async () => checkChannelTargetFields(await policyForAccount(this.deps.targetPolicy, this.accountId), type, body.config));
    if (c.kind === 'AlertChannel' && type !== null && isBuiltinChannelType(type)) {
      // A registered transport of a built-in type may add rules of its own to the config.
      const transport = this.deps.transports.get(type);
      const r = transport ? v.safeParse(transport.configSchema, body.config, { abortEarly: false }) : null;
      if (r && !r.success) this.addAll(label, 'config', toValidationIssues(r.issues));
    }
  }

  /** A reference to a construct of `kind`: the object or its logical id, which must be in the set. */
  private reference(label: string, path: string, link: unknown, kind: ResourceKind, all: Map<string, Construct>): string | null {
    if (isConstruct(link)) {
      if (link.kind !== kind) {
        this.add(label, path, `must be a ${kind} construct or its logical id, not ${String(link)}`);
        return null;
      }
      return link.logicalId;
    }
    if (typeof link !== 'string') {
      this.add(label, path, `must be a ${kind} construct or its logical id`);
      return null;
    }
    if (!all.has(resourceKey(kind, link))) {
      this.add(label, path, `names "${link}", which is no ${kind} construct of this set`);
      return null;
    }
    return link;
  }

  private channelLinks(label: string, links: unknown, all: Map<string, Construct>): DesiredResource['channels'] {
    if (!Array.isArray(links)) {
      this.add(label, 'alertChannels', 'must be an array of AlertChannel constructs or logical ids');
      return null;
    }
    const out: { logicalId: string; activated: boolean }[] = [];
    links.forEach((link, i) => {
      const path = `alertChannels.${i}`;
      const wrapped = typeof link === 'object' && link !== null && !isConstruct(link);
      const target = wrapped ? (link as { channel?: unknown }).channel : link;
      const activated = wrapped ? (link as { activated?: unknown }).activated ?? true : true;
      if (typeof activated !== 'boolean') this.add(label, `${path}.activated`, 'must be a boolean');
      const id = this.reference(label, wrapped ? `${path}.channel` : path, target, 'AlertChannel', all);
      if (id === null) return;
      if (out.some((o) => o.logicalId === id)) {
        this.add(label, path, `names the alert channel "${id}" a second time`);
        return;
      }
      out.push({ logicalId: id, activated: activated === true });
    });
    return out;
  }
}
