import { CHECK_TYPE_DEFINITIONS, RUNNERS, type CheckTypeDefinition, type Runner } from '@vigil/core';
import { dnsCheckType } from './dns-check-type.js';
import { dnsRunner, type DnsRunnerOptions } from './dns-runner.js';

/** The part of a DI container (tsyringe's DependencyContainer) that registering uses. */
export interface DnsRegistry {
  register(token: typeof CHECK_TYPE_DEFINITIONS, provider: { useValue: CheckTypeDefinition }): unknown;
  register(token: typeof RUNNERS, provider: { useValue: Runner }): unknown;
}

/**
 * Registers the DNS check type and its runner on the host's container, before Vigil is first
 * resolved: `createVigil(options, (c) => registerDnsChecks(c, { servers }))`. A process that only
 * serves the API may register the type alone (`checkTypes: [dnsCheckType]`), one that only runs
 * checks the runner alone; this registers both.
 */
export function registerDnsChecks(container: DnsRegistry, options: DnsRunnerOptions = {}): Runner {
  const runner = dnsRunner(options);
  container.register(CHECK_TYPE_DEFINITIONS, { useValue: dnsCheckType });
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
