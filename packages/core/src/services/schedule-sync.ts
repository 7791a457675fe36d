import type { CheckGroup } from '../model/check-group.js';
import type { Check } from '../model/check.js';
import { plannedEntries } from '../rules/schedule-plan.js';
import type { ServiceDeps } from './deps.js';

/**
 * Puts a check's schedule in step with the check as stored: its next run in each of its
 * locations, or none while it (or its group) is deactivated. Called on every write of a check or
 * its group, so an engine in any process picks the change up at the next run.
 */
export async function syncSchedule(deps: ServiceDeps, accountId: string, check: Check, group: CheckGroup | null): Promise<void> {
  await deps.storage.schedule.remove(accountId, check.id);
  for (const entry of plannedEntries(accountId, check, group, deps.defaultLocation, deps.clock.now())) {
    await deps.storage.schedule.upsert(entry);
  }
}
