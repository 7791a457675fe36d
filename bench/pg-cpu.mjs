// What the benches that run PostgreSQL on the same machine share: the CPU its processes used.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds used by PostgreSQL's processes so far (Linux, same machine), NaN elsewhere. */
export function pgCpu() {
  try {
    let ticks = 0;
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (!/\((postgres|postmaster)\)/.test(stat)) continue;
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks += Number(f[11]) + Number(f[12]);
      } catch { /* gone */ }
    }
    return ticks / 100;
  } catch {
    return NaN;
  }
}
