// Helpers that runners share (a plugin may not import another plugin): a time-limited regex, a
// JSON-path reader and `{{KEY}}` placeholders.
export { RegexSandbox, type RegexExtraction } from './regex-sandbox.js';
export { isJsonPath, readJsonPath } from './json-path.js';
export { fillVariables } from './variables.js';
