// Helpers that runners share (a plugin may not import another plugin): a run's result and the
// frame of its `run`, a time-limited regex, a JSON-path reader, `{{KEY}}` placeholders, the fences
// of a process that runs a check's code, the target policy (which addresses a check may connect
// to), shouldFail's inverted verdict, what a credential header holds that a run scrubs, and the
// certificate reading the engine does under the target policy.
export { positiveOption, runChecked, runResult } from './run-result.js';
export {
  asNumber, asText, compareNumber, compareValue, cutText, isEmptyValue, NUMERIC_COMPARISONS, quoteText, takesTarget,
  type CompareOptions, type Compared,
} from './assertion-values.js';
export { probeCertificate } from './probe-certificate.js';
export { RegexSandbox, type RegexExtraction } from './regex-sandbox.js';
export { isJsonPath, readJsonPath } from './json-path.js';
export { fillVariables } from './variables.js';
export { credentialSecrets, isCredentialHeader } from './credential-headers.js';
export { applyShouldFail } from './should-fail.js';
export {
  API_SCRIPT_PARAMETERS,
  apiScriptSource,
  apiScriptSyntaxError,
  permissionFlag,
  scriptProcessFlags,
  WITHHELD_SCRIPT_MODULES,
  type ScriptProcessLimits,
} from './script-isolation.js';
export { endWithHost } from './child-reaper.js';
export { directoryArtifacts, RunArtifacts, type ArtifactFile, type ArtifactKey, type ArtifactRecord, type ArtifactStore } from './artifacts.js';
export {
  classifyAddress,
  embeddedIpv4,
  formatIpAddress,
  OPEN_TARGET_POLICY,
  parseCidr,
  parseIpAddress,
  parseIpv4,
  parseIpv6,
  policyOf,
  PUBLIC_ONLY_TARGET_POLICY,
  targetPolicy,
  targetRefusalMessage,
  type AddressRange,
  type IpAddress,
  type TargetPolicy,
  type TargetPolicyChoice,
  type TargetPolicyOptions,
  type TargetPolicySetting,
  type TargetRefusal,
} from './target-policy.js';
export { ProxyRun, TargetProxy, type ProxyConnectionError, type RefusedTarget } from './target-proxy.js';
export { lookupChecked, systemLookupAll, type CheckedTarget, type LookupAllFunction, type ResolvedAddress } from './target-lookup.js';
