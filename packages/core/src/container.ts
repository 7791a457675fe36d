import 'reflect-metadata';
import { container as globalContainer, instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { ALERT_TRANSPORTS, type AlertTransport } from './ports/alert-transport.js';
import { CERTIFICATE_PROBE, type CertificateProbe } from './ports/certificate-probe.js';
import { SUBSCRIBER_MAILER, type SubscriberMailer } from './ports/subscriber-mailer.js';
import { AUTHENTICATOR, type Authenticator } from './ports/authenticator.js';
import { systemClock } from './defaults/clock.js';
import { randomIdGenerator } from './defaults/id-generator.js';
import { redactingLogger, silentLogger } from './defaults/logger.js';
import { noopMetrics } from './defaults/metrics.js';
import { aesGcmSecretBox } from './defaults/secret-box.js';
import { CLOCK, type Clock } from './ports/clock.js';
import { ID_GENERATOR, type IdGenerator } from './ports/id-generator.js';
import { LOGGER, type Logger } from './ports/logger.js';
import { METRICS, type Metrics } from './ports/metrics.js';
import { CHECK_TYPE_DEFINITIONS, RUNNERS, type Runner } from './ports/runner.js';
import type { CheckTypeDefinition } from './model/check-type.js';
import { isBuiltinCheckType } from './model/check.js';
import { SECRET_BOX, type SecretBox } from './ports/secret-box.js';
import { STORAGE, type ServedLocations, type VigilStorage } from './ports/storage.js';
import { createToken, resolve, resolveAll } from './ports/token.js';
import { hostTargetPolicy, type TargetPolicyChoice } from './runner-kit/target-policy.js';
import { AlertDispatcher, type DispatcherOptions } from './engine/dispatcher.js';
import { Engine } from './engine/engine.js';
import type { EngineOptions } from './engine/engine-options.js';
import { GAUGE_METRICS } from './engine/instruments.js';
import { AccountService } from './services/accounts.js';
import { PublicPageService, type PublicPageOptions } from './services/public-pages.js';
import { AlertChannelService } from './services/alert-channels.js';
import { ApplyService, type ApplyOptions, type ApplyPlan } from './services/apply.js';
import { AnalyticsService } from './services/analytics.js';
import { ApiKeyAuthenticator, ApiKeyService } from './services/api-keys.js';
import { CheckGroupService } from './services/check-groups.js';
import { CheckResultService, CheckStatusService } from './services/check-results.js';
import { CheckSessionService } from './services/check-sessions.js';
import { CheckService } from './services/checks.js';
import { ClientCertificateService } from './services/client-certificates.js';
import { DashboardService } from './services/dashboards.js';
import type { ServiceDeps } from './services/deps.js';
import { ErrorGroupService } from './services/error-groups.js';
import { HeartbeatService } from './services/heartbeats.js';
import { IncidentService } from './services/incidents.js';
import { MaintenanceWindowService } from './services/maintenance-windows.js';
import { SnippetService } from './services/snippets.js';
import { ReportingService } from './services/reporting.js';
import { ServiceCatalog } from './services/service-catalog.js';
import { StatusPageIncidentService } from './services/status-page-incidents.js';
import { StatusPageSubscriberService, type StatusPageSubscriptionOptions } from './services/status-page-subscribers.js';
import { StatusPageService } from './services/status-pages.js';

export interface VigilOptions {
  /** The store. Omit it when a storage plugin registers one (e.g. `registerKnexStorage`). */
  storage?: VigilStorage;
  /**
   * The 32-byte key that seals secrets at rest (64 hex characters, base64, or a Buffer). Keep it
   * outside the database; without the same key, stored secrets cannot be read back.
   */
  secretKey?: string | Buffer;
  /** Replaces the AES-256-GCM secret box built from `secretKey`. */
  secretBox?: SecretBox;
  clock?: Clock;
  logger?: Logger;
  /** Where Vigil counts runs, claims, alerts and API requests (e.g. `prometheusMetrics()`). Default: nowhere. */
  metrics?: Metrics;
  ids?: IdGenerator;
  /** Replaces API-key authentication (e.g. with the host's own sessions). */
  authenticator?: Authenticator;
  /** Seconds a verified API key is trusted before it is read again (default 5; 0 = every request). */
  apiKeyCacheSeconds?: number;
  /** Where a check with no locations runs. Default `us-east-1`. */
  defaultLocation?: string;
  /** The locations this process runs. Default: every location. */
  serves?: ServedLocations;
  runners?: Runner[];
  /** Check types plugins add (`defineCheckType`); also registrable on `CHECK_TYPE_DEFINITIONS`. */
  checkTypes?: CheckTypeDefinition[];
  transports?: AlertTransport[];
  /** Reads certificates for the daily expiry job (@vigil/alert-channels registers one). */
  certificateProbe?: CertificateProbe;
  /** The scheduler and run loop: concurrency, leases, time limits (see EngineOptions). */
  engine?: EngineOptions;
  /**
   * Alert delivery from the outbox (see DispatcherOptions). `enabled` defaults to whether this
   * process has any transport registered, so an agent without transports leaves alerts to the host.
   */
  alerts?: DispatcherOptions & { enabled?: boolean };
  /** History kept on the public pages (see PublicPageOptions). */
  publicPages?: PublicPageOptions;
  /**
   * Email subscriptions to status pages (see StatusPageSubscriptionOptions): on when `publicUrl`
   * is set and a mailer is (`subscriberMailer`, or `@vigil/alert-channels` given SMTP settings).
   */
  statusPageSubscriptions?: StatusPageSubscriptionOptions;
  /** Sends status-page subscribers their emails; also registrable on SUBSCRIBER_MAILER. */
  subscriberMailer?: SubscriberMailer;
  /**
   * Which addresses checks may reach. `{ refuseInternalAddresses: true, allow: ['10.20.0.0/16'] }`
   * refuses loopback, private, link-local and other internal addresses, for hosts that let
   * untrusted accounts create checks; `'public-only'` says the same, `'open'` allows every address.
   * A function gives each account its own: `(accountId) => accountId === own ? 'open' : 'public-only'`
   * (asked at each run, delivery and write; where no account is known, public-only applies).
   * Default: every address (the embedded case).
   */
  targetPolicy?: TargetPolicyChoice;
}

/** The application services of one Vigil instance, as a host or the HTTP adapter calls them. */
export interface Vigil {
  readonly container: DependencyContainer;
  readonly storage: VigilStorage;
  readonly deps: ServiceDeps;
  readonly authenticator: Authenticator;
  readonly serves: ServedLocations;
  readonly accounts: AccountService;
  readonly apiKeys: ApiKeyService;
  readonly checks: CheckService;
  readonly checkGroups: CheckGroupService;
  readonly alertChannels: AlertChannelService;
  readonly clientCertificates: ClientCertificateService;
  readonly checkResults: CheckResultService;
  readonly checkStatuses: CheckStatusService;
  readonly errorGroups: ErrorGroupService;
  readonly dashboards: DashboardService;
  readonly maintenanceWindows: MaintenanceWindowService;
  readonly snippets: SnippetService;
  readonly incidents: IncidentService;
  readonly statusPages: StatusPageService;
  readonly services: ServiceCatalog;
  readonly statusPageIncidents: StatusPageIncidentService;
  /** Email subscriptions to status pages: subscribe, confirm, unsubscribe, list. */
  readonly statusPageSubscribers: StatusPageSubscriberService;
  readonly checkSessions: CheckSessionService;
  readonly reporting: ReportingService;
  readonly analytics: AnalyticsService;
  readonly heartbeats: HeartbeatService;
  /** What the public pages show: dashboards, status pages and badges (rendered by the HTTP adapter). */
  readonly publicPages: PublicPageService;
  /** Checks as code: syncs constructs (`@vigil/core/constructs`) with the account's resources. */
  readonly code: ApplyService;
  /**
   * Creates, updates and (with `prune`) deletes resources so that they match the constructs, keyed by
   * logical id; answers the plan it carried out. Nothing is written when a construct is invalid.
   */
  apply(accountId: string, constructs: readonly unknown[], options?: ApplyOptions): Promise<ApplyPlan>;
  /** What `apply` would do, writing nothing. */
  plan(accountId: string, constructs: readonly unknown[], options?: Omit<ApplyOptions, 'dryRun' | 'onProgress'>): Promise<ApplyPlan>;
  /** The scheduler and run loop of this process (idle until start()). */
  readonly engine: Engine;
  /** Alert delivery of this process (idle until start()). */
  readonly alerts: AlertDispatcher;
  /**
   * Starts running checks: the schedule is brought in step with the stored checks, then due slots
   * of the served locations are claimed and run, and check sessions run as they are triggered.
   */
  start(): Promise<void>;
  /**
   * Stops claiming, lets running jobs finish (up to the engine's stop deadline), releases leases
   * and closes the runners (browser processes). The store stays open, so the API still answers
   * and `start()` may run checks again; `close()` is what ends everything.
   */
  stop(deadlineMs?: number): Promise<void>;
  /**
   * Stops the engine if it runs (running checks get `deadlineMs`, default the engine's
   * `stopDeadlineMs`), then closes the runners and the store: after it nothing Vigil opened keeps
   * the process alive. The way to shut a host down (`closeOnSignals` wires it to SIGTERM/SIGINT).
   */
  close(deadlineMs?: number): Promise<void>;
}

export const VIGIL_OPTIONS = createToken<VigilOptions>('vigil.options');
export const SERVICE_DEPS = createToken<ServiceDeps>('vigil.serviceDeps');
export const VIGIL = createToken<Vigil>('vigil.instance');

function secretBoxFrom(options: VigilOptions): SecretBox {
  if (options.secretBox) return options.secretBox;
  if (options.secretKey === undefined) {
    throw new Error('Vigil needs a secretKey (32 bytes: 64 hex characters or base64) to seal secrets at rest');
  }
  return aesGcmSecretBox(options.secretKey);
}

/** The registered check types by name; two of one name, or of one route slug, are a wiring mistake. */
function checkTypeMap(definitions: readonly CheckTypeDefinition[]): Map<string, CheckTypeDefinition> {
  const byType = new Map<string, CheckTypeDefinition>();
  const slugs = new Set<string>();
  for (const d of definitions) {
    if (isBuiltinCheckType(d.checkType)) throw new Error(`The check type ${d.checkType} is built in; a plugin cannot register it`);
    if (byType.has(d.checkType)) throw new Error(`The check type ${d.checkType} is registered twice`);
    if (slugs.has(d.slug)) throw new Error(`Two check types use the route slug "${d.slug}"`);
    byType.set(d.checkType, d);
    slugs.add(d.slug);
  }
  return byType;
}

/**
 * Wires Vigil's ports and services on the host's container. Plugins register on the same container
 * with their own `register<Package>(container, options)`, before `VIGIL` is first resolved.
 */
export function registerVigil(container: DependencyContainer, options: VigilOptions = {}): DependencyContainer {
  if (container === globalContainer) {
    // Library code never uses the global container: two Vigil instances would share state.
    throw new Error('Pass a child container (container.createChildContainer()) to registerVigil');
  }
  // Built here so that a malformed allow entry stops the host at start-up.
  const policy = hostTargetPolicy(options.targetPolicy);
  container.register(VIGIL_OPTIONS, { useValue: options });
  container.register(CLOCK, { useValue: options.clock ?? systemClock });
  container.register(LOGGER, { useValue: options.logger ?? silentLogger });
  container.register(METRICS, { useValue: options.metrics ?? noopMetrics });
  container.register(ID_GENERATOR, { useValue: options.ids ?? randomIdGenerator });
  container.register(SECRET_BOX, { useFactory: instanceCachingFactory(() => secretBoxFrom(options)) });
  if (options.storage) container.register(STORAGE, { useValue: options.storage });
  for (const runner of options.runners ?? []) container.register(RUNNERS, { useValue: runner });
  for (const checkType of options.checkTypes ?? []) container.register(CHECK_TYPE_DEFINITIONS, { useValue: checkType });
  for (const transport of options.transports ?? []) container.register(ALERT_TRANSPORTS, { useValue: transport });

  container.register(SERVICE_DEPS, {
    useFactory: instanceCachingFactory((c): ServiceDeps => {
      if (!c.isRegistered(STORAGE, true)) {
        throw new Error('No Vigil storage registered: pass `storage` or call a storage plugin\'s register function');
      }
      return {
        storage: resolve(c, STORAGE),
        secretBox: resolve(c, SECRET_BOX),
        clock: resolve(c, CLOCK),
        ids: resolve(c, ID_GENERATOR),
        logger: redactingLogger(resolve(c, LOGGER)),
        metrics: resolve(c, METRICS),
        runners: new Map(resolveAll(c, RUNNERS).map((r) => [r.checkType, r])),
        checkTypes: checkTypeMap(resolveAll(c, CHECK_TYPE_DEFINITIONS)),
        transports: new Map(resolveAll(c, ALERT_TRANSPORTS).map((t) => [t.channelType, t])),
        certificateProbe: options.certificateProbe ?? (c.isRegistered(CERTIFICATE_PROBE, true) ? resolve(c, CERTIFICATE_PROBE) : null),
        subscriberMailer: options.subscriberMailer ?? (c.isRegistered(SUBSCRIBER_MAILER, true) ? resolve(c, SUBSCRIBER_MAILER) : null),
        defaultLocation: options.defaultLocation ?? 'us-east-1',
        targetPolicy: policy,
      };
    }),
  });
  container.register(AUTHENTICATOR, {
    useFactory: instanceCachingFactory((c) => options.authenticator ?? new ApiKeyAuthenticator(resolve(c, SERVICE_DEPS), { cacheSeconds: options.apiKeyCacheSeconds })),
  });
  container.register(VIGIL, { useFactory: instanceCachingFactory((c) => buildVigil(c, options)) });
  return container;
}

function buildVigil(c: DependencyContainer, options: VigilOptions): Vigil {
  const deps = resolve(c, SERVICE_DEPS);
  const serves = options.serves ?? { locations: 'all', privateLocations: 'all' };
  const checks = new CheckService(deps);
  const maintenanceWindows = new MaintenanceWindowService(deps);
  const errorGroups = new ErrorGroupService(deps);
  const checkSessions = new CheckSessionService(deps);
  const alertChannels = new AlertChannelService(deps);
  // The dispatcher is made below; a subscriber email queued before then waits for its first poll.
  let wakeAlerts = () => {};
  const statusPageSubscribers = new StatusPageSubscriberService(deps, options.statusPageSubscriptions, () => wakeAlerts());
  const statusPageIncidents = new StatusPageIncidentService(deps, statusPageSubscribers);
  const checkGroups = new CheckGroupService(deps);
  const dashboards = new DashboardService(deps);
  const code = new ApplyService(deps, { checks, checkGroups, alertChannels, maintenanceWindows, dashboards });
  const alerts = new AlertDispatcher({ deps, alertChannels, statusPageSubscribers }, options.alerts);
  wakeAlerts = () => alerts.wake();
  const clientCertificates = new ClientCertificateService(deps);
  const snippets = new SnippetService(deps);
  const engine = new Engine(
    { deps, checks, maintenanceWindows, errorGroups, statusPageIncidents, clientCertificates, snippets, serves, alertDispatcher: alerts },
    options.engine,
  );
  const dispatching = () => options.alerts?.enabled ?? (deps.transports.size > 0 || statusPageSubscribers.enabled);
  registerGauges(deps, engine);
  const closeRunners = async () => {
    for (const runner of deps.runners.values()) {
      await runner.close?.().catch((err: unknown) => deps.logger.warn('a runner did not close cleanly', { checkType: runner.checkType, error: String(err) }));
    }
  };
  return {
    container: c,
    storage: deps.storage,
    deps,
    authenticator: resolve(c, AUTHENTICATOR),
    serves,
    accounts: new AccountService(deps),
    apiKeys: new ApiKeyService(deps),
    checks,
    checkGroups,
    alertChannels,
    clientCertificates,
    checkResults: new CheckResultService(deps),
    checkStatuses: new CheckStatusService(deps),
    errorGroups,
    dashboards,
    maintenanceWindows,
    snippets,
    incidents: new IncidentService(deps),
    statusPages: new StatusPageService(deps, statusPageSubscribers),
    statusPageSubscribers,
    services: new ServiceCatalog(deps),
    statusPageIncidents,
    checkSessions,
    reporting: new ReportingService(deps),
    analytics: new AnalyticsService(deps),
    heartbeats: new HeartbeatService(deps),
    publicPages: new PublicPageService(deps, statusPageIncidents, options.publicPages),
    code,
    apply: (accountId, constructs, applyOptions) => code.apply(accountId, constructs, applyOptions),
    plan: (accountId, constructs, planOptions) => code.plan(accountId, constructs, planOptions),
    engine,
    alerts,
    async start() {
      checkSessions.setLauncher(engine);
      await engine.start();
      if (dispatching()) alerts.start();
    },
    async stop(deadlineMs?: number) {
      checkSessions.setLauncher(undefined);
      await engine.stop(deadlineMs);
      await alerts.stop();
      await closeRunners();
    },
    async close(deadlineMs?: number) {
      checkSessions.setLauncher(undefined);
      await engine.stop(deadlineMs);
      await alerts.stop();
      await closeRunners();
      await deps.storage.close();
    },
  };
}

/** The gauges read at scrape time: the outbox is counted in the store, so every process tells the same depth. */
function registerGauges(deps: ServiceDeps, engine: Engine): void {
  const metrics = deps.metrics ?? noopMetrics;
  if (metrics === noopMetrics) return;
  metrics.gauge({
    ...GAUGE_METRICS.outboxDepth,
    collect: async () => {
      try {
        const outbox = deps.storage.outbox;
        return outbox.depth ? await outbox.depth() : (await outbox.pending()).length;
      } catch (err) {
        // An unreachable store must not fail the whole scrape: the depth reads as unknown.
        deps.logger.warn('metrics: could not count the outbox', { error: err instanceof Error ? err.message : String(err) });
        return Number.NaN;
      }
    },
  });
  metrics.gauge({ ...GAUGE_METRICS.activeRuns, collect: () => engine.active });
}

/**
 * Builds a Vigil on a fresh child container in one call:
 * `const vigil = createVigil({ storage, secretKey })`. `configure` registers plugins first.
 */
export function createVigil(
  options: VigilOptions = {},
  configure?: (container: DependencyContainer) => void,
): Vigil {
  const container = globalContainer.createChildContainer();
  registerVigil(container, options);
  configure?.(container);
  return resolve(container, VIGIL);
}
