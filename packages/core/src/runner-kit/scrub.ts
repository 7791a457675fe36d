// The masking of secrets in what a run produced, as runners and the engine both use it. Runner-kit
// is its home for the code outside the engine; the functions themselves are still written in
// engine/scrub.ts, which is to become a re-export of this file once the engine imports from here.
export { MIN_SCRUBBED_LENGTH, SCRUBBED, scrubDeep, scrubSecrets } from '../engine/scrub.js';
