import 'reflect-metadata';

export * from './errors.js';

export * from './model/parse.js';
export * from './model/primitives.js';
export * from './model/shared.js';
export * from './model/api-request.js';
export * from './model/check.js';
export * from './model/check-group.js';
export * from './model/alert-channel.js';
export * from './model/check-result.js';
export * from './model/check-status.js';
export * from './model/check-session.js';
export * from './model/account.js';
export * from './model/maintenance-window.js';
export * from './model/dashboard.js';
export * from './model/incident.js';
export * from './model/status-page.js';
export * from './model/client-certificate.js';
export * from './model/error-group.js';
export * from './model/analytics.js';
export * from './model/reporting.js';
export * from './model/heartbeat-availability.js';

export * from './rules/frequency-offset.js';
export * from './rules/schedule.js';
export * from './rules/maintenance.js';
export * from './rules/retry.js';
export * from './rules/alerting.js';
export * from './rules/group-defaults.js';
export * from './rules/api-check-defaults.js';
export * from './rules/error-message.js';
export * from './rules/transitions.js';
export * from './rules/session-targets.js';
export * from './rules/result-aggregates.js';
export * from './rules/schedule-plan.js';
export * from './rules/incident-trigger.js';
export * from './rules/uptime.js';
export * from './runner-kit/index.js';

export * from './ports/token.js';
export * from './ports/clock.js';
export * from './ports/logger.js';
export * from './ports/id-generator.js';
export * from './ports/secret-box.js';
export * from './ports/authenticator.js';
export * from './ports/runner.js';
export * from './ports/alert-transport.js';
export * from './ports/certificate-probe.js';
export * from './ports/client-certificates.js';
export * from './ports/storage.js';

export * from './services/index.js';
export * from './engine/index.js';
export * from './container.js';
