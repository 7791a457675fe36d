// What a script's DevTools connection may send, and how the gate says no: the tables the gate
// (devtools-gate.ts) and each client's checks (gate-client.ts) share.

export const NOT_ALLOWED = -32000;
export const NO_SESSION = -32001;

/** URL schemes a script may open a page at. */
export const NAVIGABLE = new Set(['http:', 'https:', 'about:', 'data:', 'blob:']);

/** Browser-level commands a script's connection may send (puppeteer's own needs and the context-scoped ones). */
export const BROWSER_LEVEL = new Set([
  'Target.getBrowserContexts',
  'Target.setDiscoverTargets',
  'Target.setAutoAttach',
  'Target.createTarget',
  'Target.createBrowserContext',
  'Target.disposeBrowserContext',
  'Target.getTargets',
  'Target.getTargetInfo',
  'Target.attachToTarget',
  'Target.detachFromTarget',
  'Target.closeTarget',
  'Target.activateTarget',
  'Target.autoAttachRelated',
  'Browser.getVersion',
  'Browser.grantPermissions',
  'Browser.resetPermissions',
  'Browser.setPermission',
  'Browser.setDownloadBehavior',
  'Browser.getWindowForTarget',
  'Storage.getCookies',
  'Storage.setCookies',
  'Storage.clearCookies',
  'SystemInfo.getInfo',
  'SystemInfo.getFeatureState',
]);

/** Browser-level commands that act on the default context when they name none: a script's act on its run's. */
export const CONTEXT_DEFAULTED = new Set([
  'Target.createTarget',
  'Browser.grantPermissions',
  'Browser.resetPermissions',
  'Browser.setPermission',
  'Browser.setDownloadBehavior',
  'Storage.getCookies',
  'Storage.setCookies',
  'Storage.clearCookies',
]);

/** Commands that reach past the run on any session. */
export const REFUSED = new Map<string, string>([
  ['Target.attachToBrowserTarget', 'it would give a connection to the whole browser'],
  ['Target.exposeDevToolsProtocol', 'it would give a page a connection to the whole browser'],
  ['Target.setRemoteLocations', 'it would make the browser connect elsewhere'],
  ['Target.sendMessageToTarget', 'sessions are flat'],
  ['Browser.close', 'the browser is shared with other runs'],
  ['Browser.crash', 'the browser is shared with other runs'],
  ['Browser.crashGpuProcess', 'the browser is shared with other runs'],
  ['Browser.executeBrowserCommand', 'the browser is shared with other runs'],
  ['Browser.setWindowBounds', 'windows are shared with other runs'],
  ['Browser.getBrowserCommandLine', 'the browser is shared with other runs'],
  ['Network.loadNetworkResource', 'it loads files of the host'],
]);
export const REFUSED_DOMAINS = new Map<string, string>([
  ['Tracing', 'a trace records every page of the browser'],
  ['Extensions', 'extensions act on every page of the browser'],
  ['PWA', 'installed apps outlive the run'],
]);

export interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  sessionId?: string;
}

export interface TargetInfo {
  targetId: string;
  type?: string;
  browserContextId?: string;
}

/** A command the gate refuses; its message says why. */
export class Refusal extends Error {}

/** The scheme of a URL, lower case with its colon (`file:`), or '' when it has none. */
export function scheme(url: string): string {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url.trim());
  return match ? `${match[1]!.toLowerCase()}:` : '';
}
