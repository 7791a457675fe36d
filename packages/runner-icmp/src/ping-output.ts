/** The round trips of the replies, in milliseconds to 0.01. */
export interface LatencyStats {
  min: number;
  avg: number;
  max: number;
  /** Population standard deviation, as ping's `mdev`. */
  stdDev: number;
}

export interface PingReply {
  /** `icmp_seq` of the echo request answered (1 for the first). */
  seq: number;
  /** Round trip in milliseconds, as ping printed it. */
  time: number;
}

/** What one ping run found. */
export interface PingOutcome {
  /** Echo requests asked for. */
  count: number;
  /** Of those, the echo requests ping says it sent (the count asked for when ping ended before its summary). */
  sent: number;
  /** Replies counted: one per sequence number up to `count`, each within the timeout. */
  received: number;
  /** Percent of the `count` echo requests unanswered, to 0.01. */
  packetLoss: number;
  /** Null when no reply came. */
  latency: LatencyStats | null;
  /** The replies counted, in sequence order. */
  replies: PingReply[];
  /** ping's error lines: `From 10.0.0.1 icmp_seq=1 Destination Host Unreachable`, `ping: sendmsg: ...`. */
  errors: string[];
  /** Milliseconds from spawning ping to its end. */
  elapsedMs: number;
}

/** A parsed run and what tells whether ping's output was read at all. */
export interface ScannedOutput {
  outcome: Omit<PingOutcome, 'elapsedMs'>;
  /** ping's own summary line (`10 packets transmitted, 7 received`), null when there was none. */
  summary: { transmitted: number; received: number } | null;
  /** Reply lines read that were not duplicates, whatever their sequence number or round trip. */
  replyLines: number;
  /** Reply lines left out: duplicates, later than the timeout, or past the count. */
  dropped: number;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** min/avg/max and the population standard deviation of round trips; null for none. */
export function latencyStats(times: readonly number[]): LatencyStats | null {
  if (times.length === 0) return null;
  const avg = times.reduce((s, t) => s + t, 0) / times.length;
  const variance = times.reduce((s, t) => s + (t - avg) ** 2, 0) / times.length;
  return { min: round2(Math.min(...times)), avg: round2(avg), max: round2(Math.max(...times)), stdDev: round2(Math.sqrt(variance)) };
}

/** ping's lines on stderr start with its program name (`ping: `, `/usr/bin/ping: `): left out. */
const PROGRAM = /^\S*ping\S*?: /;
export const WARNING = /^\S*ping\S*?: Warning:/i;
export const withoutProgram = (line: string) => line.replace(PROGRAM, '');

export const REPLY = /^\d+ bytes from \S+?:? icmp_seq=(\d+) .*?time[=<]([\d.]+) ms/;
const ERROR_FROM = /^From \S+ icmp_seq=\d+ /;
// BusyBox writes `1 packets received`: read here so that its count shows its replies went unread.
const SUMMARY = /^(\d+) packets transmitted, (\d+) (?:packets )?received/;

/** The reply a line reports, when it is one to count: not a duplicate, within the count and the timeout. */
export function countedReply(line: string, count: number, timeoutMs: number): PingReply | null {
  const reply = REPLY.exec(line.trim());
  if (!reply || line.includes('(DUP!)')) return null;
  const seq = Number(reply[1]);
  const time = Number(reply[2]);
  return seq >= 1 && seq <= count && time <= timeoutMs ? { seq, time } : null;
}

/**
 * Reads ping's output (LC_ALL=C, `-n`): reply lines, `From ...` error lines and the summary.
 * A duplicate reply, a reply later than `timeoutMs` and one to a request past `count` are not
 * counted; the loss is taken over the `count` asked for, so a ping cut short counts what it never
 * sent as lost.
 */
export function scanPingOutput(stdout: string, stderr: string, count: number, timeoutMs: number): ScannedOutput {
  const bySeq = new Map<number, number>();
  const errors: string[] = [];
  let summary: ScannedOutput['summary'] = null;
  let replyLines = 0;
  let dropped = 0;
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (REPLY.test(line)) {
      if (!line.includes('(DUP!)')) replyLines++;
      const reply = countedReply(line, count, timeoutMs);
      if (reply && !bySeq.has(reply.seq)) bySeq.set(reply.seq, reply.time);
      else dropped++;
      continue;
    }
    if (ERROR_FROM.test(line)) {
      errors.push(line);
      continue;
    }
    const found = SUMMARY.exec(line);
    if (found) summary = { transmitted: Number(found[1]), received: Number(found[2]) };
  }
  for (const raw of stderr.split('\n')) {
    const line = raw.trim();
    // Warnings (`source address might be selected on device other than: lo`) do not stop a run.
    if (line !== '' && !WARNING.test(line)) errors.push(withoutProgram(line));
  }
  const replies = [...bySeq].map(([seq, time]) => ({ seq, time })).sort((a, b) => a.seq - b.seq);
  const received = replies.length;
  return {
    outcome: {
      count,
      // ping sends past the count while it waits for a missing reply; those are not the run's.
      sent: summary ? Math.min(summary.transmitted, count) : count,
      received,
      packetLoss: round2(((count - received) / count) * 100),
      latency: latencyStats(replies.map((r) => r.time)),
      replies,
      errors,
    },
    summary,
    replyLines,
    dropped,
  };
}

/** {@link scanPingOutput}'s outcome. */
export function parsePingOutput(stdout: string, stderr: string, count: number, timeoutMs: number): Omit<PingOutcome, 'elapsedMs'> {
  return scanPingOutput(stdout, stderr, count, timeoutMs).outcome;
}

/**
 * Why ping's output of a run that ended with `code` cannot be read as iputils' (null when it can):
 * exit 1 without a summary line, exit 0 without a reply read, a summary counting more replies than
 * the lines read, or an exit code iputils does not give. `interrupted`: the runner stopped ping.
 */
export function unreadable(scanned: ScannedOutput, code: number | null, interrupted: boolean): string | null {
  const { summary, replyLines, dropped, outcome } = scanned;
  if (code === null) return interrupted ? null : 'it ended without an exit code';
  if (code !== 0 && code !== 1) return `it ended with exit code ${code}`;
  if (code === 1 && !summary) return 'it ended with exit code 1 and no summary line';
  if (summary && summary.received > replyLines) return `its summary counts ${summary.received} replies, but ${replyLines} reply lines were read`;
  if (code === 0 && outcome.received === 0 && dropped === 0) return 'it ended with exit code 0, but no reply line was read';
  return null;
}
