import { isCheckActive } from './transitions.js';

/**
 * matchTags of a session trigger: the outer array is OR, each inner array AND; a tag with a
 * leading `!` must be absent. No filter (undefined or []) matches every check.
 */
export function matchesTags(tags: readonly string[], matchTags: readonly (readonly string[])[] | undefined): boolean {
  if (!matchTags || matchTags.length === 0) return true;
  const have = new Set(tags);
  return matchTags.some((all) =>
    all.every((tag) => (tag.startsWith('!') ? !have.has(tag.slice(1)) : have.has(tag))),
  );
}

export interface TargetCheck {
  id: string;
  tags: string[];
  activated: boolean;
  groupId: number | null;
}

export interface SessionTarget {
  checkId?: string[] | undefined;
  matchTags?: string[][] | undefined;
}

/**
 * The checks a session starts for: eligible (activated, with their group) checks that satisfy every
 * filter given. A group's tags count as its members'. Input order is kept.
 */
export function selectSessionTargets<T extends TargetCheck>(
  checks: readonly T[],
  groups: ReadonlyMap<number, { tags: string[]; activated: boolean }>,
  target?: SessionTarget | null,
): T[] {
  const ids = target?.checkId ? new Set(target.checkId.map((id) => id.toLowerCase())) : null;
  return checks.filter((check) => {
    const group = check.groupId === null ? null : groups.get(check.groupId) ?? null;
    if (!isCheckActive(check, group)) return false;
    if (ids && !ids.has(check.id.toLowerCase())) return false;
    return matchesTags([...check.tags, ...(group?.tags ?? [])], target?.matchTags);
  });
}
