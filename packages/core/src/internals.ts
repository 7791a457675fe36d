// @vigil/core/internals: the engine, the application services and the rules they apply, for
// Vigil's own tests, benchmarks and tools. A host reaches all of it through `createVigil` and the
// `Vigil` it answers; a plugin needs none of it. Nothing here is a stable API: names change with
// the engine. In the built package this entry is a bundle of its own, so a class from here is not
// the class of the same name inside the root's `Vigil`: use it for values and functions, not for
// `instanceof` on what the root hands out.
export * from './engine/index.js';
export * from './services/index.js';
export { SERVICE_DEPS } from './container.js';

export * from './rules/alerting.js';
export * from './rules/api-check-defaults.js';
export * from './rules/error-message.js';
export * from './rules/frequency-offset.js';
export * from './rules/group-defaults.js';
export * from './rules/incident-trigger.js';
export * from './rules/maintenance.js';
export * from './rules/response-time.js';
export * from './rules/result-aggregates.js';
export * from './rules/retry.js';
export * from './rules/schedule.js';
export * from './rules/schedule-plan.js';
export * from './rules/session-targets.js';
export * from './rules/transitions.js';
export * from './rules/uptime.js';
