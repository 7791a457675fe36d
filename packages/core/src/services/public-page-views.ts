/** What the public pages (dashboards, status pages, badges) show: the views the page service answers. */
import type { Dashboard } from '../model/dashboard.js';
import type { IncidentUpdateStatus } from '../model/incident.js';
import type { StatusPage, StatusPageIncidentEntry } from '../model/status-page.js';
import type { UptimeDay } from '../rules/uptime.js';

/** What a public page says of a check. */
export type PublicCheckState = 'PASSING' | 'DEGRADED' | 'FAILING' | 'PAUSED' | 'PENDING';
export const PUBLIC_CHECK_STATES: readonly PublicCheckState[] = ['FAILING', 'DEGRADED', 'PENDING', 'PASSING', 'PAUSED'];

/** One hour of a check's last day: how its final runs went. */
export interface PublicCheckHour {
  start: string;
  runs: number;
  failures: number;
  /** Median response time of the hour's final runs, in milliseconds (null without runs): a sparkline's point. */
  p50: number | null;
}

export interface PublicCheck {
  id: string;
  name: string;
  checkType: string;
  state: PublicCheckState;
  groupName: string | null;
  /** The check's own tags. */
  tags: string[];
  /** Over the last 24 hours, in milliseconds (null without runs). */
  avg: number | null;
  p95: number | null;
  p99: number | null;
  /** Percent of the last 24 hours' final runs that passed (null without runs). */
  successRatio: number | null;
  runs24h: number;
  lastRunAt: string | null;
  lastRunLocation: string | null;
  /** The last 24 hours by the hour, oldest first (only when asked for). */
  hours: PublicCheckHour[];
}

export interface PublicIncidentUpdate {
  id: string;
  status: IncidentUpdateStatus;
  description: string;
  created_at: string;
}

/** A dashboard incident as its page shows it: updates newest first. */
export interface PublicIncident {
  id: string;
  name: string;
  impact: string;
  status: IncidentUpdateStatus;
  /** Started (no startedAt, or one in the past) and not stopped. */
  active: boolean;
  /** Its startedAt lies ahead (announced maintenance, say). */
  upcoming: boolean;
  startedAt: string | null;
  stoppedAt: string | null;
  created_at: string;
  updates: PublicIncidentUpdate[];
}

export type PublicDashboard = Omit<Dashboard, 'accountId' | 'keys'>;

export interface DashboardView {
  dashboard: PublicDashboard;
  /**
   * Every check the dashboard shows (or, when a page was asked of a dashboard that paginates, that
   * page's checks): failing first, then degraded, pending, passing, paused; by name within.
   */
  checks: PublicCheck[];
  /** The page of checks given (from 1) and how many pages the dashboard's checks make. */
  page: number;
  pages: number;
  /** Of every check the dashboard shows. */
  counts: Record<PublicCheckState, number>;
  incidents: PublicIncident[];
  generatedAt: string;
}

export type ServiceState = 'OPERATIONAL' | 'MAINTENANCE' | 'DISRUPTED';

export interface PublicService {
  id: string;
  name: string;
  state: ServiceState;
  /** Percent over the days shown (null before any). */
  uptime: number | null;
  days: UptimeDay[];
}

export type PublicStatusPage = Omit<StatusPage, 'accountId' | 'cards'>;

export interface StatusPageView {
  page: PublicStatusPage;
  state: ServiceState;
  cards: { id: string; name: string; services: PublicService[] }[];
  /** Open incidents on the page's services, newest first. */
  activeIncidents: StatusPageIncidentEntry[];
  /** Resolved ones of the days shown, newest first. */
  pastIncidents: StatusPageIncidentEntry[];
  generatedAt: string;
}

export interface BadgeView {
  state: PublicCheckState;
  /** Average response time over the last 24 hours, in milliseconds (null without runs). */
  responseTime: number | null;
}

export interface PublicPageOptions {
  /** Days of history on a status page. Default 90. */
  uptimeDays?: number;
  /** Resolved dashboard incidents stay listed this long. Default 7 days. */
  incidentHistoryMs?: number;
  /** How many past status-page incidents a page lists. Default 20. */
  pastIncidents?: number;
}
