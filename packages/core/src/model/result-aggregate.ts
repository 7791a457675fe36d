// What an aggregate query over check results asks for and what it answers: the contract of
// CheckResultRepository.aggregate, and what the rules compute the same answer from in memory.

export type ResultStatusFilter = 'success' | 'failure';
export type AggregateFunction =
  | 'avg' | 'max' | 'median' | 'min' | 'p50' | 'p90' | 'p95' | 'p99' | 'stddev' | 'sum' | 'count';

/** One number to compute over results: a function of a phase (`responseTime` is the result's own). */
export interface AggregateMeasure {
  /** Key of the value in the answer, e.g. `total_p95`. */
  name: string;
  /** `responseTime`, `attempts`, or a key of `phases`. */
  field: string;
  fn: AggregateFunction;
}

export interface ResultAggregateQuery {
  checkIds: string[];
  /** Results with from <= startedAt < to. */
  from: Date;
  to: Date;
  /** Bucket width; buckets start at from + k * bucketMs. Null or absent: one bucket for the window. */
  bucketMs?: number | null;
  groupBy?: 'runLocation' | 'statusCode' | null;
  filterByStatus?: ResultStatusFilter[];
  /** A measure over no values is null, except `count` (0); stddev of one value is null. */
  measures: AggregateMeasure[];
  /** Only FINAL results count unless asked otherwise. */
  includeAttempts?: boolean;
}

/** One row per check, bucket and group that holds results (empty buckets give no row), ordered by checkId, then bucketStart. */
export interface ResultAggregateRow {
  checkId: string;
  /** Start of the bucket (ISO), or the window's start without buckets. */
  bucketStart: string;
  /** The runLocation, or the statusCode as text (null for none), under groupBy; else null. */
  group: string | null;
  count: number;
  /** Results with hasFailures or hasErrors. */
  failures: number;
  values: Record<string, number | null>;
  /**
   * Some of the row's results were read from a store's hourly roll-ups: its percentiles are then
   * estimates (within the store's stated relative error), not computed over every value.
   */
  approximate?: boolean;
}
