import type { CheckGroup } from '../model/check-group.js';
import type { Check } from '../model/check.js';
import { alertTickEntry, plannedEntries } from '../rules/schedule-plan.js';
import type { ServiceDeps } from './deps.js';

/**
 * Puts a check's schedule in step with the check as stored: its next run in each of its
 * locations, or none while it (or its group) is deactivated. Called on every write of a check or
 * its group, so an engine in any process picks the change up at the next run.
 */
export async function syncSchedule(deps: ServiceDeps, accountId: string, check: Check, group: CheckGroup | null): Promise<void> {
  await deps.storage.schedule.remove(accountId, check.id);
  const now = deps.clock.now();
  const entries = plannedEntries(accountId, check, group, deps.defaultLocation, now);
  for (const entry of entries) await deps.storage.schedule.upsert(entry);
  // A check that is failing keeps its between-runs alert tick.
  if (entries.length > 0 && ((await deps.storage.alertStates.get(accountId, check.id))?.status ?? 'PASSING') !== 'PASSING') {
    await deps.storage.schedule.upsert(alertTickEntry(accountId, check.id, now));
  }
}
