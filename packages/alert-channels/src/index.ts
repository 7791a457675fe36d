/** @vigil/alert-channels: a transport for each alert channel type, and the certificate probe. */
export { registerAlertChannels, alertTransports, type AlertChannelsOptions } from './register.js';
export { webhookTransport, renderWebhook, renderTemplate, templateContext, templateError, signBody, WebhookTransportConfigSchema, SIGNATURE_HEADER, ALERT_ID_HEADER, type RenderedWebhook, type WebhookTransportOptions } from './webhook.js';
export { emailTransport, smtpMailer, renderEmail, type EmailOptions, type RenderedEmail } from './email.js';
export { chatTransport, chatAppTransport, chatMessage, chatAppCard } from './chat.js';
export { smsTransport, callTransport, smsText, callTwiml, DEFAULT_PHONE_BASE_URL, type PhoneProviderOptions } from './phone.js';
export { pagingATransport, pagingBTransport, pagingAEvent, pagingBRequest, dedupKey, DEFAULT_PAGING_A_BASE_URL, DEFAULT_PAGING_B_BASE_URLS, type PagingAOptions, type PagingBOptions } from './paging.js';
export { tlsCertificateProbe, type TlsProbeOptions } from './certificate-probe.js';
export { alertFields, alertFacts, alertText, severityOf, isRecovery, TEMPLATE_VARIABLES, type AlertFields, type Severity } from './fields.js';
export { DeliveryError, type HttpOptions } from './http.js';
export { guardedAgent, TARGET_POLICY_CODE } from './target-guard.js';
