/** An SMTP check type and its runner, written against @vigil/core alone. */
export { isSmtpHost, SMTP_TLS_MODES, smtpCheckType, type SmtpCheck, type SmtpTlsMode } from './smtp-check-type.js';
export { SmtpFailure, type SmtpReply, type SmtpStage } from './smtp-conversation.js';
export { EHLO_NAME, smtpRunner, validateSmtpCheck, type SmtpRunnerOptions } from './smtp-runner.js';
export { registerSmtpChecks } from './register.js';
