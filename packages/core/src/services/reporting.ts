import { parse } from '../model/parse.js';
import { resolveTimeWindow } from '../model/time-window.js';
import { ReportingQuerySchema, type ReportEntry } from '../model/reporting.js';
import type { ServiceDeps } from './deps.js';

/**
 * GET /v1/reporting: per check, the share of passing runs (percent) and avg/p95/p99 response time
 * (ms) in the window. A check without runs in the window reports 0 for all four.
 */
export class ReportingService {
  constructor(private readonly deps: ServiceDeps) {}

  async report(accountId: string, rawQuery: unknown): Promise<ReportEntry[]> {
    const q = parse(ReportingQuerySchema, rawQuery ?? {}, 'query');
    const { from, to } = resolveTimeWindow(q, this.deps.clock.now());
    const tags = q.filterByTags ?? [];
    const checks = (await this.deps.storage.checks.listAll(accountId)).filter(
      (c) =>
        (q.deactivated === undefined || q.deactivated === !c.activated) &&
        (tags.length === 0 || c.tags.some((t) => tags.includes(t))),
    );
    if (checks.length === 0) return [];
    const rows = await this.deps.storage.checkResults.aggregate(accountId, {
      checkIds: checks.map((c) => c.id),
      from,
      to,
      measures: [
        { name: 'avg', field: 'responseTime', fn: 'avg' },
        { name: 'p95', field: 'responseTime', fn: 'p95' },
        { name: 'p99', field: 'responseTime', fn: 'p99' },
      ],
    });
    const byCheck = new Map(rows.map((r) => [r.checkId, r]));
    return checks.map((c) => {
      const r = byCheck.get(c.id);
      const round = (n: number | null | undefined) => (n === null || n === undefined ? 0 : Math.round(n * 100) / 100);
      return {
        name: c.name,
        checkId: c.id,
        checkType: c.checkType,
        deactivated: !c.activated,
        tags: c.tags,
        aggregate: {
          successRatio: r && r.count > 0 ? round(((r.count - r.failures) / r.count) * 100) : 0,
          avg: round(r?.values.avg),
          p95: round(r?.values.p95),
          p99: round(r?.values.p99),
        },
      };
    });
  }
}
