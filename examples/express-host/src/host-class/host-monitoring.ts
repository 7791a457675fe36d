// The host's own monitoring as a class that the container builds: it receives Vigil's instance and
// logger through their DI tokens, keeps the host's own checks in step with the code at start-up
// (checks as code, keyed by logical id), and serves GET /monitoring for the host's operators.
import 'reflect-metadata'; // before tsyringe loads and before any decorated class is declared
import express, { type Router } from 'express';
import { inject, injectable, type DependencyContainer } from 'tsyringe';
import { createToken, LOGGER, VIGIL, type ApplyPlan, type CheckStatusResponse, type Logger, type Vigil } from '@vigil/core';
import { ApiCheck, TcpCheck } from '@vigil/core/constructs';

export interface HostMonitoringOptions {
  /** The account the host's own checks belong to. */
  accountId: string;
  /** The checks-as-code project they are kept under (default `example-host-class`). */
  project?: string;
}

/** The host's own token, registered beside Vigil's (`VIGIL`, `LOGGER`, ...) in the same container. */
export const HOST_MONITORING_OPTIONS = createToken<HostMonitoringOptions>('example-host.monitoring-options');

export type HostCheckState = 'passing' | 'failing' | 'degraded' | 'no runs yet';

export interface HostCheckReport {
  logicalId: string;
  checkId: string;
  name: string;
  state: HostCheckState;
  /** When its status last changed (null before the first run). */
  updatedAt: string | null;
}

function stateOf(status: CheckStatusResponse): HostCheckState {
  if (status.hasFailures) return 'failing';
  if (status.isDegraded) return 'degraded';
  return status.lastCheckRunId === null ? 'no runs yet' : 'passing';
}

@injectable()
export class HostMonitoring {
  /** The host's checks by logical id, once ensure() has applied them. */
  private checks: { logicalId: string; checkId: string }[] = [];

  // Each parameter's type is an interface, which leaves no trace at run time (the decorator
  // metadata records it as Object), so @inject names the token registered for it.
  constructor(
    @inject(VIGIL) private readonly vigil: Vigil,
    @inject(LOGGER) private readonly logger: Logger,
    @inject(HOST_MONITORING_OPTIONS) private readonly options: HostMonitoringOptions,
  ) {}

  get project(): string {
    return this.options.project ?? 'example-host-class';
  }

  /** The host's checks, reaching it at `origin` (e.g. `http://127.0.0.1:3000`): its HTTP port and GET /orders. */
  constructs(origin: string) {
    const url = new URL(origin);
    const tags = [this.project];
    return [
      new TcpCheck('http-port', {
        name: 'Example host (class style): HTTP port',
        request: { hostname: url.hostname, port: Number(url.port || 80) },
        frequency: 1,
        tags,
      }),
      new ApiCheck('orders-api', {
        name: 'Example host (class style): GET /orders',
        request: { url: new URL('/orders', url).href, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
        frequency: 5,
        tags,
      }),
    ];
  }

  /**
   * Makes the host's checks, or brings them in step with constructs(), on every start: the first
   * start creates them, later ones change only what differs (a new port, say). Answers the plan.
   */
  async ensure(origin: string): Promise<ApplyPlan> {
    const plan = await this.vigil.apply(this.options.accountId, this.constructs(origin), { project: this.project });
    this.checks = plan.entries
      .filter((e) => e.kind === 'Check' && e.action !== 'delete' && e.id !== undefined)
      .map((e) => ({ logicalId: e.logicalId, checkId: String(e.id) }));
    this.logger.info('host monitoring: checks in step', { project: this.project, ...plan.summary });
    return plan;
  }

  /** Each of the host's checks with its current state. */
  async report(): Promise<HostCheckReport[]> {
    return Promise.all(
      this.checks.map(async ({ logicalId, checkId }) => {
        const status = await this.vigil.checkStatuses.get(this.options.accountId, checkId);
        return { logicalId, checkId, name: status.name, state: stateOf(status), updatedAt: status.updated_at };
      }),
    );
  }

  /**
   * GET /monitoring: the host's checks and their states; 200 while none fails, 503 when one does
   * (or before ensure() has run). Errors go on to the host's error handler.
   */
  router(): Router {
    const router = express.Router();
    router.get('/monitoring', async (_req, res) => {
      res.set('cache-control', 'no-store');
      if (this.checks.length === 0) return void res.status(503).json({ status: 'starting', checks: [] });
      const checks = await this.report();
      const failing = checks.some((c) => c.state === 'failing');
      res.status(failing ? 503 : 200).json({ status: failing ? 'failing' : 'ok', checks });
    });
    return router;
  }
}

/**
 * Puts the host's monitoring into the container that holds Vigil's tokens: its options under their
 * token, and the class as one instance per container.
 */
export function registerHostMonitoring(container: DependencyContainer, options: HostMonitoringOptions): void {
  container.register(HOST_MONITORING_OPTIONS, { useValue: options });
  container.registerSingleton(HostMonitoring);
}
