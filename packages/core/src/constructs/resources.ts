import type * as v from 'valibot';
import type { AlertChannelCreateSchema, AlertChannelFlagsSchema } from '../model/alert-channel.js';
import type { CheckGroupCreateSchema } from '../model/check-group.js';
import type { DashboardCreateSchema } from '../model/dashboard.js';
import type { MaintenanceWindowCreateSchema } from '../model/maintenance-window.js';
import { Construct, type Ref } from './construct.js';

/** An alert channel that notifies about a check or group; `activated: false` keeps the link but sends nothing. */
export type AlertChannelLink = Ref<AlertChannel | PluginAlertChannel> | { channel: Ref<AlertChannel | PluginAlertChannel>; activated?: boolean };

/** What checks and groups may name instead of alertChannelSubscriptions' numeric ids. */
export interface AlertChannelLinks {
  /**
   * The alert channels of this check or group: constructs or their logical ids. Exactly these, once
   * set: a channel that subscribes new checks itself (autoSubscribe) is taken off again.
   */
  alertChannels?: AlertChannelLink[];
}

export type CheckGroupProps = v.InferInput<typeof CheckGroupCreateSchema> & AlertChannelLinks;

/** A check group (`/v2/check-groups`): its member checks name it with `group`. */
export class CheckGroup extends Construct<CheckGroupProps> {
  readonly kind = 'CheckGroup' as const;
  readonly construct: string = 'CheckGroup';
}

export type AlertChannelProps = v.InferInput<typeof AlertChannelCreateSchema>;

/** An alert channel of a built-in type (EMAIL, WEBHOOK, SMS, CALL, CHAT, CHAT_APP, PAGING_A, PAGING_B). */
export class AlertChannel extends Construct<AlertChannelProps> {
  readonly kind = 'AlertChannel' as const;
  readonly construct: string = 'AlertChannel';
}

export type PluginAlertChannelProps = v.InferInput<typeof AlertChannelFlagsSchema> & {
  /** The channel type a registered transport serves (e.g. `NTFY`). */
  type: string;
  /** Validated by that transport's configSchema. */
  config: Record<string, unknown>;
};

/** An alert channel of a type an alert-transport plugin adds. */
export class PluginAlertChannel extends Construct<PluginAlertChannelProps> {
  readonly kind = 'AlertChannel' as const;
  readonly construct: string = 'PluginAlertChannel';
}

export type MaintenanceWindowProps = v.InferInput<typeof MaintenanceWindowCreateSchema>;

/** A maintenance window; `tags` name the checks and groups it pauses or silences. */
export class MaintenanceWindow extends Construct<MaintenanceWindowProps> {
  readonly kind = 'MaintenanceWindow' as const;
  readonly construct: string = 'MaintenanceWindow';
}

export type DashboardProps = v.InferInput<typeof DashboardCreateSchema>;

/** A dashboard; `tags` choose the checks it shows (all of them when empty). */
export class Dashboard extends Construct<DashboardProps> {
  readonly kind = 'Dashboard' as const;
  readonly construct: string = 'Dashboard';
}
