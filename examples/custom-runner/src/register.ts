import { CHECK_TYPE_DEFINITIONS, RUNNERS, type PluginRegistry, type Runner } from '@vigil/core';
import { dnsCheckType } from './dns-check-type.js';
import { dnsRunner, type DnsRunnerOptions } from './dns-runner.js';

/**
 * Registers the DNS check type and its runner on the host's container, before Vigil is first
 * resolved: `createVigil(options, (c) => registerDnsChecks(c, { servers }))`. A process that only
 * serves the API may register the type alone (`checkTypes: [dnsCheckType]`), one that only runs
 * checks the runner alone; this registers both.
 */
export function registerDnsChecks(container: PluginRegistry, options: DnsRunnerOptions = {}): Runner {
  const runner = dnsRunner(options);
  container.register(CHECK_TYPE_DEFINITIONS, { useValue: dnsCheckType });
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
