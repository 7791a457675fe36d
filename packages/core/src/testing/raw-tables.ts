/** The logical tables of a Vigil store, as a RawReader names them. */
export const RAW_TABLES = [
  'accounts',
  'api_keys',
  'checks',
  'check_groups',
  'alert_channels',
  'alert_subscriptions',
  'dashboards',
  'maintenance_windows',
  'incidents',
  'incident_updates',
  'status_pages',
  'services',
  'status_page_incidents',
  'status_page_incident_updates',
  'status_page_subscribers',
  'client_certificates',
  'snippets',
  'managed_resources',
  'error_groups',
  'test_session_error_groups',
  'check_sessions',
  'check_statuses',
  'check_results',
  'alert_states',
  'heartbeat_pings',
  'schedule',
  'outbox',
  'delivery_attempts',
] as const;
export type RawTable = (typeof RAW_TABLES)[number];

/**
 * Reads rows as stored, past the repositories, so that a wrong write cannot hide behind a
 * matching wrong read. A SQL store answers `select *`: column names and JSON encoding are its own.
 */
export interface RawReader {
  dump(table: RawTable): Promise<Record<string, unknown>[]>;
}
