const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * Fills `{{KEY}}` placeholders from the run's environment (the check's and group's variables,
 * secrets decrypted). An unknown key stays as written, so a typo shows in what was sent.
 */
export function fillVariables(text: string, environment: Readonly<Record<string, string>>): string {
  if (!text.includes('{{')) return text;
  return text.replace(PLACEHOLDER, (whole, key: string) => (Object.hasOwn(environment, key) ? environment[key]! : whole));
}
