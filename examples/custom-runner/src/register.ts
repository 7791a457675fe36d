import { CHECK_TYPE_DEFINITIONS, RUNNERS, type PluginRegistry, type Runner } from '@vigil/core';
import { smtpCheckType } from './smtp-check-type.js';
import { smtpRunner, type SmtpRunnerOptions } from './smtp-runner.js';

/**
 * Registers the SMTP check type and its runner on the host's container, before Vigil is first
 * resolved: `createVigil(options, (c) => registerSmtpChecks(c, { ca }))`. A process that only
 * serves the API may register the type alone (`checkTypes: [smtpCheckType]`), one that only runs
 * checks the runner alone; this registers both.
 */
export function registerSmtpChecks(container: PluginRegistry, options: SmtpRunnerOptions = {}): Runner {
  const runner = smtpRunner(options);
  container.register(CHECK_TYPE_DEFINITIONS, { useValue: smtpCheckType });
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
