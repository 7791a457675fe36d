import type { PublicCheck, PublicService } from '@vigil/core';

// What the pages' HTML bars and uPlot charts are drawn from. The HTML carries every figure; the
// chart data (JSON in the page) repeats them for the chart script.

const DAY_CLASSES = ['b-ok', 'b-some', 'b-down', 'b-none'] as const;

export function hourClass(h: { runs: number; failures: number }): string {
  if (h.runs === 0) return 'b-none';
  if (h.failures === 0) return 'b-ok';
  return h.failures === h.runs ? 'b-down' : 'b-some';
}

export function dayBar(day: { date: string; uptime: number | null; downMs: number }): { date: string; cls: (typeof DAY_CLASSES)[number]; label: string } {
  if (day.uptime === null) return { date: day.date, cls: 'b-none', label: 'no data' };
  const cls = day.downMs === 0 ? 'b-ok' : day.uptime >= 95 ? 'b-some' : 'b-down';
  return { date: day.date, cls, label: `${day.uptime}% uptime` };
}

/** A check's sparkline: the median response time of each of its last 24 hours (null: no runs). */
export function sparkChart(check: PublicCheck): { kind: 'spark'; name: string; t: number[]; p50: (number | null)[]; runs: number[] } {
  return {
    kind: 'spark',
    name: check.name,
    t: check.hours.map((h) => Date.parse(h.start) / 1000),
    p50: check.hours.map((h) => h.p50),
    runs: check.hours.map((h) => h.runs),
  };
}

/** What a screen reader hears of a sparkline (the canvas itself says nothing). */
export function sparkLabel(check: PublicCheck): string {
  const values = check.hours.map((h) => h.p50).filter((v): v is number => v !== null);
  if (values.length === 0) return 'Median response time by the hour: no runs in the last 24 hours';
  const last = check.hours.findLast((h) => h.p50 !== null)!;
  return `Median response time by the hour over the last 24 hours: ${Math.min(...values)} to ${Math.max(...values)} ms, ${last.p50} ms in the latest hour with runs`;
}

/** A service's daily uptime bars: a class (index into ok, some, down, none) and a label per day. */
export function dayChart(service: PublicService): { kind: 'days'; name: string; dates: string[]; labels: string[]; cls: number[] } {
  const bars = service.days.map(dayBar);
  return {
    kind: 'days',
    name: service.name,
    dates: bars.map((b) => b.date),
    labels: bars.map((b) => b.label),
    cls: bars.map((b) => DAY_CLASSES.indexOf(b.cls)),
  };
}
