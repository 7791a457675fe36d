import { makeBadge } from 'badge-maker';
import type { BadgeView } from '@vigil/core';

const STATE_BADGES: Record<string, { message: string; color: string }> = {
  PASSING: { message: 'passing', color: '#2e7d32' },
  DEGRADED: { message: 'degraded', color: '#b26a00' },
  FAILING: { message: 'failing', color: '#c62828' },
  PAUSED: { message: 'paused', color: '#6b7280' },
  PENDING: { message: 'pending', color: '#6b7280' },
};

/**
 * A shields-style SVG (badge-maker measures the text and escapes it). Badges name no check or
 * group: an address is enough to read one, so it shows a state and a time, nothing more.
 */
export function badgeSvg(view: BadgeView | null, options: { responseTime: boolean }): string {
  if (!view) return makeBadge({ label: 'vigil', message: 'not found', color: '#6b7280' });
  if (options.responseTime) {
    return makeBadge({ label: 'response time', message: view.responseTime === null ? 'no runs' : `${view.responseTime} ms`, color: STATE_BADGES[view.state]!.color });
  }
  const s = STATE_BADGES[view.state]!;
  return makeBadge({ label: 'status', message: s.message, color: s.color });
}
