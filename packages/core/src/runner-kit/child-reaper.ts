import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/**
 * The watcher's own code, run with `node -e` so that it needs no file of this package at run
 * time. It takes `+pid` and `-pid` lines on stdin; when its host is gone (stdin ends, or its
 * parent changes: checked every second) it kills with SIGKILL every pid still listed and exits.
 * On Linux it notes each process's start time when told of it and kills only a process that still
 * has it, so that a pid the system handed to another process since is left alone.
 */
const WATCHER_SOURCE = `// Vigil: ends the host's script processes when the host is gone.
'use strict';
const fs = require('node:fs');
const host = process.ppid;
const startOf = (pid) => {
  try {
    const stat = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] || null;
  } catch {
    return null;
  }
};
const procfs = startOf(process.pid) !== null;
const children = new Map();
let ended = false;
function reap() {
  if (ended) return;
  ended = true;
  for (const [pid, start] of children) {
    if (start !== startOf(pid)) continue;
    try { process.kill(pid, 'SIGKILL'); } catch {}
  }
  process.exit(0);
}
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  const lines = (pending + chunk).split('\\n');
  pending = lines.pop();
  for (const line of lines) {
    const pid = Number(line.slice(1));
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    if (line[0] === '-') children.delete(pid);
    else if (line[0] === '+') {
      const start = startOf(pid);
      if (!procfs || start !== null) children.set(pid, start);
    }
  }
});
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
setInterval(() => { if (process.ppid !== host) reap(); }, 1000);
// A terminal's Ctrl-C or hang-up reaches the whole group; this process lives exactly as long as its host.
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
`;

let watcher: ChildProcess | null = null;

function runningWatcher(): ChildProcess | null {
  if (watcher !== null && watcher.exitCode === null && watcher.signalCode === null && watcher.stdin?.writable) return watcher;
  let started: ChildProcess;
  try {
    started = spawn(process.execPath, ['-e', WATCHER_SOURCE], { env: {}, stdio: ['pipe', 'ignore', 'ignore'], windowsHide: true });
  } catch {
    return null;
  }
  started.on('error', () => {});
  started.stdin!.on('error', () => {});
  started.once('exit', () => {
    if (watcher === started) watcher = null;
  });
  // It must not keep the host running: the host's exit is what it waits for.
  started.unref();
  (started.stdin as Socket).unref();
  watcher = started;
  return started;
}

/**
 * Makes `child` end with this process, however this process ends. A child that runs a check's
 * code ends itself when its IPC channel closes, but a script stuck in a synchronous loop
 * (`while (true) {}`) never gets to notice, and a host killed with SIGKILL runs no exit handler
 * to kill it. A watch inside the child would need a thread of its own, and a script's process
 * may start none (the permission model; a worker's fresh `process` would also hand a script back
 * the signals the fences take away). So one small watcher process per host (started with the
 * first child, unref'd) holds the pids of the children still running and kills them with SIGKILL
 * once the host is gone. A child told of here is forgotten when it exits.
 */
export function endWithHost(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const to = runningWatcher();
  if (to === null) return;
  to.stdin!.write(`+${pid}\n`);
  child.once('exit', () => {
    if (to.stdin!.writable) to.stdin!.write(`-${pid}\n`);
  });
}
