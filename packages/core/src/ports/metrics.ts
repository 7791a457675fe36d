import { createToken } from './token.js';

/** Label values of one series. Keep them few and bounded: never an id, a path or a message. */
export type MetricLabels = Readonly<Record<string, string>>;

/** What an instrument is: its full name (`vigil_` prefix included), its help text and its label names. */
export interface MetricSpec {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
}

export interface HistogramSpec extends MetricSpec {
  /** Upper bounds of the buckets, in the metric's unit (seconds for durations). */
  readonly buckets: readonly number[];
}

export interface GaugeSpec extends MetricSpec {
  /**
   * Read when the metrics are collected (a scrape), so the value is true at that moment, even
   * across processes. A gauge with `collect` takes no `set` calls and has no labels.
   */
  readonly collect?: () => number | Promise<number>;
}

export interface CounterMetric {
  inc(labels?: MetricLabels, by?: number): void;
}

export interface HistogramMetric {
  observe(labels: MetricLabels, value: number): void;
}

export interface GaugeMetric {
  set(labels: MetricLabels, value: number): void;
}

/**
 * Where Vigil counts what it does, as a port: the engine, the services and the HTTP adapter ask
 * for an instrument by its spec and call it. An implementation answers the same instrument when
 * asked twice for one name. Core has no metrics library; `@vigil/http-express-adapter` offers a
 * Prometheus one (`prometheusMetrics()`). The default does nothing.
 */
export interface Metrics {
  counter(spec: MetricSpec): CounterMetric;
  histogram(spec: HistogramSpec): HistogramMetric;
  gauge(spec: GaugeSpec): GaugeMetric;
}

export const METRICS = createToken<Metrics>('vigil.metrics');
