/**
 * @vigil/core/constructs: monitoring described in code, next to the code it watches, and synced
 * with `vigil.apply(accountId, constructs, { prune })`. A separate entry because its class names
 * (CheckGroup, AlertChannel, MaintenanceWindow, Dashboard) are the resource types' names in `@vigil/core`.
 */
export { Construct, isConstruct, CONSTRUCT_BRAND, type Ref } from './construct.js';
export { suiteFiles } from './suite-files.js';
export {
  CheckConstruct,
  TcpCheck,
  ApiCheck,
  BrowserCheck,
  HeartbeatCheck,
  DnsCheck,
  UrlCheck,
  IcmpCheck,
  MultiStepCheck,
  PlaywrightCheck,
  PluginCheck,
  type CheckLinks,
  type TcpCheckProps,
  type ApiCheckProps,
  type BrowserCheckProps,
  type HeartbeatCheckProps,
  type DnsCheckProps,
  type UrlCheckProps,
  type IcmpCheckProps,
  type MultiStepCheckProps,
  type PlaywrightCheckProps,
  type PluginCheckProps,
} from './checks.js';
export {
  CheckGroup,
  AlertChannel,
  PluginAlertChannel,
  MaintenanceWindow,
  Dashboard,
  type AlertChannelLink,
  type AlertChannelLinks,
  type CheckGroupProps,
  type AlertChannelProps,
  type PluginAlertChannelProps,
  type MaintenanceWindowProps,
  type DashboardProps,
} from './resources.js';
