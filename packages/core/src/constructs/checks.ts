import type * as v from 'valibot';
import type {
  ApiCheckCreateSchema,
  BrowserCheckCreateSchema,
  CheckCommonCreateSchema,
  HeartbeatCheckCreateSchema,
  TcpCheckCreateSchema,
} from '../model/check.js';
import type { DnsCheckCreateSchema } from '../model/check-dns.js';
import type { IcmpCheckCreateSchema } from '../model/check-icmp.js';
import type { MultiStepCheckCreateSchema } from '../model/check-multistep.js';
import type { PlaywrightCheckCreateSchema } from '../model/check-playwright.js';
import type { UrlCheckCreateSchema } from '../model/check-url.js';
import { Construct, type Ref } from './construct.js';
import type { AlertChannelLinks, CheckGroup } from './resources.js';

/** What a check may name by construct or logical id instead of numeric ids. */
export interface CheckLinks extends AlertChannelLinks {
  /** The group the check belongs to: a CheckGroup construct or its logical id (or `groupId` for a group made by hand). */
  group?: Ref<CheckGroup> | null;
}

export type TcpCheckProps = v.InferInput<typeof TcpCheckCreateSchema> & CheckLinks;
export type ApiCheckProps = v.InferInput<typeof ApiCheckCreateSchema> & CheckLinks;
export type BrowserCheckProps = v.InferInput<typeof BrowserCheckCreateSchema> & CheckLinks;
export type HeartbeatCheckProps = v.InferInput<typeof HeartbeatCheckCreateSchema> & CheckLinks;
export type DnsCheckProps = v.InferInput<typeof DnsCheckCreateSchema> & CheckLinks;
export type UrlCheckProps = v.InferInput<typeof UrlCheckCreateSchema> & CheckLinks;
export type IcmpCheckProps = v.InferInput<typeof IcmpCheckCreateSchema> & CheckLinks;
export type MultiStepCheckProps = v.InferInput<typeof MultiStepCheckCreateSchema> & CheckLinks;
export type PlaywrightCheckProps = v.InferInput<typeof PlaywrightCheckCreateSchema> & CheckLinks;
/** A plugin's check: the common fields typed, the plugin's own fields checked by its schema when applied. */
export type PluginCheckProps = v.InferInput<typeof CheckCommonCreateSchema> & CheckLinks & Record<string, unknown>;

/** A check of any type; its type cannot change once made (a new type replaces the check). */
export abstract class CheckConstruct<TProps extends object = object> extends Construct<TProps> {
  readonly kind = 'Check' as const;
  abstract readonly checkType: string;
}

/** A TCP check: `new TcpCheck('orders-db', { name: 'Orders DB', request: { hostname: 'db', port: 5432 } })`. */
export class TcpCheck extends CheckConstruct<TcpCheckProps> {
  readonly checkType = 'TCP';
  readonly construct: string = 'TcpCheck';
}

/** An API (HTTP) check. */
export class ApiCheck extends CheckConstruct<ApiCheckProps> {
  readonly checkType = 'API';
  readonly construct: string = 'ApiCheck';
}

/** A browser check: a script run in Chromium. */
export class BrowserCheck extends CheckConstruct<BrowserCheckProps> {
  readonly checkType = 'BROWSER';
  readonly construct: string = 'BrowserCheck';
}

/** A heartbeat check: fails when no ping arrives within period + grace. Its ping URL is read from the API after apply. */
export class HeartbeatCheck extends CheckConstruct<HeartbeatCheckProps> {
  readonly checkType = 'HEARTBEAT';
  readonly construct: string = 'HeartbeatCheck';
}

/** A DNS check: `new DnsCheck('shop-dns', { name: 'Shop DNS', request: { query: 'shop.example.com', recordType: 'A' } })`. */
export class DnsCheck extends CheckConstruct<DnsCheckProps> {
  readonly checkType = 'DNS';
  readonly construct: string = 'DnsCheck';
}

/** A URL check: `new UrlCheck('home', { name: 'Home page', request: { url: 'https://shop.example.com/' } })`. */
export class UrlCheck extends CheckConstruct<UrlCheckProps> {
  readonly checkType = 'URL';
  readonly construct: string = 'UrlCheck';
}

/** An ICMP (ping) check: `new IcmpCheck('edge-router', { name: 'Edge router', request: { hostname: '192.0.2.1' } })`. */
export class IcmpCheck extends CheckConstruct<IcmpCheckProps> {
  readonly checkType = 'ICMP';
  readonly construct: string = 'IcmpCheck';
}

/**
 * A multi-step check: several HTTP requests as one check, written as code.
 * `new MultiStepCheck('login', { name: 'Login flow', script: "await step('home', async () => { ... })" })`.
 */
export class MultiStepCheck extends CheckConstruct<MultiStepCheckProps> {
  readonly checkType = 'MULTI_STEP';
  readonly construct: string = 'MultiStepCheck';
}

/**
 * A Playwright check suite: a Playwright Test project's files, run as one check. Read a folder of
 * the repository with `suiteFiles('checks/shop')` from `@vigil/core/constructs`.
 */
export class PlaywrightCheck extends CheckConstruct<PlaywrightCheckProps> {
  readonly checkType = 'PLAYWRIGHT';
  readonly construct: string = 'PlaywrightCheck';
}

/** A check of a type a plugin adds (`defineCheckType`): `new PluginCheck('mail', 'SMTP', {...})`. */
export class PluginCheck extends CheckConstruct<PluginCheckProps> {
  readonly construct: string = 'PluginCheck';

  constructor(
    logicalId: string,
    readonly checkType: string,
    props: PluginCheckProps,
  ) {
    super(logicalId, props);
  }
}
