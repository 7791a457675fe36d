import { existsSync } from 'node:fs';
import { readdir, readFile, readlink, realpath } from 'node:fs/promises';

/** Rounds of looking for a run's processes (a process may start another while it is killed). */
const ROUNDS = 10;

/** The pids of the processes (not zombies, not this one) whose working folder is inside `dir` or whose command line names it. */
export async function processesOfFolder(dir: string): Promise<number[]> {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const state = (await readFile(`/proc/${entry}/stat`, 'utf8')).split(') ').pop()?.[0];
      if (state === 'Z') continue;
      let cwd = '';
      try {
        cwd = await readlink(`/proc/${entry}/cwd`);
      } catch {
        // A process of another user.
      }
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ');
      if (cwd === dir || cwd.startsWith(`${dir}/`) || cmdline.includes(dir)) pids.push(Number(entry));
    } catch {
      // The process ended while it was read.
    }
  }
  return pids;
}

/**
 * Kills (SIGKILL) every process of a run that its process group did not take: those a test started
 * in a session or group of their own (`setsid`, `detached`), found by their working folder inside
 * the run's folder or a command line that names it. Looks again until none is left, at most 10 times.
 * Linux only (it reads /proc); elsewhere it does nothing.
 */
export async function killLeftovers(folder: string): Promise<void> {
  if (!existsSync('/proc/self')) return;
  const dir = await realpath(folder).catch(() => folder);
  for (let round = 0; round < ROUNDS; round++) {
    const pids = await processesOfFolder(dir);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already, or not ours.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
