import type { ApplyPlan, PlanAction, PlanEntry } from '../services/apply.js';

export interface FormatPlanOptions {
  /** ANSI colours (+ green, ~ yellow, - red). Default false. */
  color?: boolean;
  /** List unchanged resources too. Default false. */
  verbose?: boolean;
}

const SYMBOLS: Record<PlanAction, string> = { create: '+', update: '~', delete: '-', unchanged: '=' };
const COLORS: Record<PlanAction, string> = { create: '32', update: '33', delete: '31', unchanged: '2' };
const MAX_VALUE = 100;

export const paint = (on: boolean | undefined, code: string, text: string) => (on ? `\u001b[${code}m${text}\u001b[0m` : text);

/** A value on one line, cut short when long (a script, a long list). */
export function shortValue(value: unknown): string {
  const text = value === undefined ? '(none)' : JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The columns of one entry: symbol, kind, logical id, type, name, id. */
function columns(e: PlanEntry, symbol: string): string[] {
  return [symbol, e.kind, e.logicalId, e.type ?? '', e.name === undefined ? '' : JSON.stringify(e.name), e.id === undefined ? '' : `id ${e.id}`];
}

function table(entries: PlanEntry[], color: boolean | undefined, kept = false): string[] {
  const rows = entries.map((e) => columns(e, kept ? '?' : SYMBOLS[e.action]));
  const widths = [1, 2, 3, 4].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines: string[] = [];
  entries.forEach((e, n) => {
    const [symbol, ...cells] = rows[n]!.map((cell, i) => (i >= 1 && i <= widths.length ? cell.padEnd(widths[i - 1]!) : cell));
    lines.push(paint(color, kept ? '2' : COLORS[e.action], `  ${symbol} ${cells.join('  ').trimEnd()}`));
    if (kept) return;
    if (e.reason) lines.push(paint(color, '2', `      ${e.reason}`));
    for (const c of e.changes ?? []) {
      lines.push(`      ${c.field}: ${shortValue(c.from)} → ${shortValue(c.to)}${c.note ? paint(color, '2', `  (${c.note})`) : ''}`);
    }
  });
  return lines;
}

/**
 * A plan as a person reads it: one line per resource (+ create, ~ update with its changed fields,
 * - delete), unchanged ones counted (listed with `verbose`), then a summary line.
 */
export function formatPlan(plan: ApplyPlan, options: FormatPlanOptions = {}): string {
  const { color, verbose } = options;
  const where = `account ${plan.accountId}, project "${plan.project}"`;
  const lines = [plan.dryRun ? `Plan for ${where} (dry run: nothing was written)` : `Applied to ${where}`];
  const shown = plan.entries.filter((e) => verbose || e.action !== 'unchanged');
  lines.push(...table(shown, color));
  const s = plan.summary;
  const changed = s.create + s.update + s.delete;
  const verb = plan.dryRun ? ['to create', 'to update', 'to delete'] : ['created', 'updated', 'deleted'];
  lines.push(
    changed === 0
      ? `No changes: ${plural(s.unchanged, 'resource')} ${s.unchanged === 1 ? 'matches its construct' : 'match their constructs'}.`
      : `${s.create} ${verb[0]}, ${s.update} ${verb[1]}, ${s.delete} ${verb[2]}, ${s.unchanged} unchanged.`,
  );
  if (plan.orphans.length > 0) {
    lines.push(`${plural(plan.orphans.length, 'resource')} this project made ${plan.orphans.length === 1 ? 'has' : 'have'} no construct any more; kept, since prune is off (--prune deletes them):`);
    lines.push(...table(plan.orphans, color, true));
  }
  return `${lines.join('\n')}\n`;
}
