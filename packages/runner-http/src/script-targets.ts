import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { lookupChecked, targetRefusalMessage, type TargetPolicy } from '@vigil/core';

/** A connection of a script (setup, teardown or multi-step) that the host's target policy refused. */
export interface RefusedConnection {
  /** The host the script asked for, as it wrote it (a local socket's path, `udp`, DNS servers). */
  host: string;
  port: number;
  /** The address refused; null for a local socket, UDP or DNS servers, refused whatever their address. */
  address: string | null;
  reason: string;
  message: string;
  /** The script that asked. */
  label: string | null;
}

/** The policy a phase's connections are checked against, and where each refusal goes. */
export interface PhaseTargets {
  policy: TargetPolicy;
  refused: (refusal: RefusedConnection) => void;
}

/**
 * The HMAC on an answer, keyed by the phase's secret (handed to the process's fence before the
 * script runs), so that the fence takes no answer the script made up (child/target-fence.cjs).
 */
export function signAnswer(key: Buffer, answer: { id: string; addresses?: unknown; error?: unknown }): string {
  return createHmac('sha256', key).update(JSON.stringify([answer.id, answer.addresses ?? null, answer.error ?? null])).digest('hex');
}

const LOCAL_REASON = 'under a target policy, scripts connect over TCP only, to addresses it allows';
/** What a script's fence refuses itself, and why. */
const LOCAL_KINDS = new Map([
  ['local socket', LOCAL_REASON],
  ['UDP socket', LOCAL_REASON],
  ['DNS servers', LOCAL_REASON],
  ['direct connection', 'under a target policy, scripts connect through Node\'s sockets, which ask the policy first, not through a socket handle of their own'],
]);

/** A value the process sent, as text: strings and numbers only (the script can call process.send itself). */
const text = (value: unknown, most = 300) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '').slice(0, most);

/**
 * Answers a script process's `target-check`: looks the host up once, checks every address, and
 * answers the addresses (the process connects to one of them) or the error to fail the
 * connection with. A refusal is recorded before the answer goes out.
 */
export async function answerTargetCheck(child: ChildProcess, message: Record<string, unknown>, targets: PhaseTargets, label: string | null, key: Buffer): Promise<void> {
  const host = text(message.host, 255);
  const port = Number(text(message.port, 16)) || 0;
  const family = message.family === 4 || message.family === 6 ? message.family : 0;
  let answer: Record<string, unknown>;
  try {
    const checked = await lookupChecked(targets.policy, host, family);
    if (checked.refusal) {
      const reason = checked.refusal.reason;
      const refusalMessage = targetRefusalMessage(checked.refusal, host);
      targets.refused({ host, port, address: checked.refusal.address, reason, message: refusalMessage, label });
      answer = { error: { message: refusalMessage, code: 'ETARGETPOLICY' } };
    } else {
      answer = { addresses: checked.addresses.map(({ address, family: f }) => ({ address, family: f })) };
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    answer = { error: { message: e instanceof Error ? e.message : String(err), code: typeof e?.code === 'string' ? e.code : 'ENOTFOUND' } };
  }
  sendAnswer(child, key, { id: text(message.id, 64), ...answer });
}

function sendAnswer(child: ChildProcess, key: Buffer, signed: { id: string; addresses?: unknown; error?: unknown }): void {
  if (child.connected) child.send({ type: 'target-answer', ...signed, mac: signAnswer(key, signed) }, () => {});
}

/** The most connections one script process (a phase of setup or teardown, a multi-step run) may have checked under a target policy. */
export const MAX_TARGET_CHECKS = 100;

/** Answers a `target-check` past MAX_TARGET_CHECKS with an error, looking nothing up. */
export function answerOverLimit(child: ChildProcess, message: Record<string, unknown>, key: Buffer): void {
  const error = { message: `Under a target policy, a script's process may open at most ${MAX_TARGET_CHECKS} connections`, code: 'ETOOMANYCONNECTIONS' };
  sendAnswer(child, key, { id: text(message.id, 64), error });
}

/** Records a `target-refused` a script process reports: a local socket, UDP or DNS servers, which its fence refuses itself. */
export function recordLocalRefusal(message: Record<string, unknown>, targets: PhaseTargets, label: string | null): void {
  const kind = text(message.kind);
  const reason = LOCAL_KINDS.get(kind);
  if (!reason) return;
  const what = text(message.what, 200);
  targets.refused({ host: what, port: 0, address: null, reason, message: `The target policy refused the script's ${kind} ${what}: ${reason}`, label });
}
