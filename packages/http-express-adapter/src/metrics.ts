import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DependencyContainer } from 'tsyringe';
import {
  DURATION_BUCKETS_SECONDS,
  type CounterMetric,
  type GaugeMetric,
  type GaugeSpec,
  type HistogramMetric,
  type HistogramSpec,
  type Metrics,
  type MetricSpec,
  type Vigil,
} from '@vigil/core';
import { vigilFrom } from './vigil-from.js';

export interface PrometheusMetricsOptions {
  /** The host's prom-client registry. Default: a registry of Vigil's own (`.registry`). */
  registry?: Registry;
  /**
   * Also collect Node's process metrics (prom-client's default metrics) on the registry. Default:
   * true on Vigil's own registry, false on the host's, which usually collects them already.
   */
  processMetrics?: boolean;
}

/** Vigil's Metrics port on a prom-client registry. */
export interface PrometheusMetrics extends Metrics {
  readonly registry: Registry;
}

type AnyMetric = { type?: string };

/**
 * Vigil's metrics as Prometheus metrics: `createVigil({ metrics: prometheusMetrics(), ... })`, then
 * `app.get('/metrics', metricsHandler(vigil))`. On the host's registry, Vigil's `vigil_*` series sit
 * beside the host's own.
 */
export function prometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  const registry = options.registry ?? new Registry();
  if (options.processMetrics ?? options.registry === undefined) collectDefaultMetrics({ register: registry });
  // A gauge reads the newest callback given for its name, so a Vigil made again on the same
  // registry (a restart inside one process) counts its own store, not a closed one.
  const collectors = new Map<string, () => number | Promise<number>>();

  /** The registry's metric of this name when there is one; asking twice answers the same metric. */
  function existing<T>(name: string, type: string): T | undefined {
    const found = registry.getSingleMetric(name) as AnyMetric | undefined;
    if (!found) return undefined;
    if (found.type !== type) throw new Error(`The registry already has a ${found.type ?? 'metric'} named ${name}; Vigil needs it as a ${type}`);
    return found as T;
  }
  const common = (spec: MetricSpec) => ({ name: spec.name, help: spec.help, labelNames: [...spec.labelNames], registers: [registry] });

  return {
    registry,
    counter(spec: MetricSpec): CounterMetric {
      const c = existing<Counter<string>>(spec.name, 'counter') ?? new Counter(common(spec));
      return { inc: (labels = {}, by = 1) => c.inc(labels, by) };
    },
    histogram(spec: HistogramSpec): HistogramMetric {
      const h = existing<Histogram<string>>(spec.name, 'histogram') ?? new Histogram({ ...common(spec), buckets: [...spec.buckets] });
      return { observe: (labels, value) => h.observe(labels, value) };
    },
    gauge(spec: GaugeSpec): GaugeMetric {
      if (spec.collect) collectors.set(spec.name, spec.collect);
      const g = existing<Gauge<string>>(spec.name, 'gauge') ?? new Gauge({
        ...common(spec),
        ...(spec.collect
          ? {
              async collect(this: Gauge<string>) {
                const read = collectors.get(spec.name);
                if (read) this.set(await read());
              },
            }
          : {}),
      });
      return { set: (labels, value) => g.set(labels, value) };
    },
  };
}

function isRegistry(x: unknown): x is Registry {
  const r = x as Partial<Registry> | null;
  return typeof r?.metrics === 'function' && typeof r.getSingleMetric === 'function';
}

function isPrometheusMetrics(x: unknown): x is PrometheusMetrics {
  const m = x as Partial<PrometheusMetrics> | null;
  return isRegistry(m?.registry) && typeof m?.counter === 'function';
}

/**
 * `GET /metrics` in the Prometheus text format, for the host to mount where its scraper (and
 * nobody else) reaches it: `app.get('/metrics', metricsHandler(vigil))`. Takes the Vigil (made with
 * `metrics: prometheusMetrics()`), its container, the PrometheusMetrics or a prom-client registry.
 */
export function metricsHandler(source: Vigil | DependencyContainer | PrometheusMetrics | Registry): RequestHandler {
  let registry: Registry;
  if (isRegistry(source)) registry = source;
  else if (isPrometheusMetrics(source)) registry = source.registry;
  else {
    const metrics = vigilFrom(source as Vigil | DependencyContainer).deps.metrics;
    if (!isPrometheusMetrics(metrics)) {
      throw new Error('metricsHandler: this Vigil counts into no Prometheus registry; create it with `metrics: prometheusMetrics()`');
    }
    registry = metrics.registry;
  }
  return (_req, res, next) => {
    registry.metrics().then((text) => {
      res.setHeader('Content-Type', registry.contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.send(text);
    }, next);
  };
}

/** The HTTP API's metrics. `route` is the route's template (`/v1/checks/:id`), never the path asked for. */
export const API_METRICS = {
  requests: {
    name: 'vigil_api_requests_total',
    help: 'Requests the Vigil API answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
  },
  duration: {
    name: 'vigil_api_request_duration_seconds',
    help: 'Time the Vigil API took to answer, by method and route template',
    labelNames: ['method', 'route'],
    buckets: DURATION_BUCKETS_SECONDS,
  },
} as const satisfies { requests: MetricSpec; duration: HistogramSpec };

/** The route label of a request that matched no route of the API. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Names the route template a request matched, for the request metrics (set before auth, so 401s and 429s carry it). */
export function routeLabel(template: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.vigilRoute = template;
    next();
  };
}

/**
 * Counts each request the router answers once it is sent (or `status="aborted"` when the client
 * hung up first). Requests no route of the router named (a host's own, behind `fallthrough`) are
 * not counted.
 */
export function apiRequestMetrics(metrics: Metrics): RequestHandler {
  const requests = metrics.counter(API_METRICS.requests);
  const duration = metrics.histogram(API_METRICS.duration);
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    let done = false;
    const record = (status: string) => {
      if (done) return;
      done = true;
      const route = res.locals.vigilRoute;
      if (typeof route !== 'string') return;
      const method = req.method;
      requests.inc({ method, route, status });
      duration.observe({ method, route }, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.once('finish', () => record(String(res.statusCode)));
    res.once('close', () => record(res.writableFinished ? String(res.statusCode) : 'aborted'));
    next();
  };
}
