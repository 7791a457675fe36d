import { DEFAULT_ALERT_SETTINGS } from '../model/shared.js';

/**
 * What every check holds for the fields its create body leaves out (the defaults the API
 * documents, shared by all check types): to compare a parsed or answered check with.
 */
export const CHECK_DEFAULTS = {
  activated: true,
  muted: false,
  doubleCheck: true,
  shouldFail: false,
  locations: [],
  tags: [],
  alertSettings: DEFAULT_ALERT_SETTINGS,
  useGlobalAlertSettings: true,
  groupId: null,
  groupOrder: null,
  runtimeId: null,
  alertChannelSubscriptions: [],
  retryStrategy: null,
  triggerIncident: null,
  runParallel: false,
  description: null,
  frequency: 10,
  privateLocations: [],
};

/** What a check group holds for the fields its create body leaves out (all but its name). */
export const CHECK_GROUP_DEFAULTS = {
  activated: true,
  muted: false,
  tags: [],
  locations: [],
  concurrency: 3,
  apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [], basicAuth: { username: '', password: '' } },
  browserCheckDefaults: null,
  runtimeId: null,
  environmentVariables: [],
  alertChannelSubscriptions: [],
  setupSnippetId: null,
  tearDownSnippetId: null,
  localSetupScript: null,
  localTearDownScript: null,
  privateLocations: [],
  runParallel: false,
  alertSettings: DEFAULT_ALERT_SETTINGS,
  retryStrategy: 'FALLBACK',
  useGlobalAlertSettings: true,
  doubleCheck: false,
};
