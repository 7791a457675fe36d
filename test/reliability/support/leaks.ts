/**
 * Finding secret values in text: as they are, URL-encoded (either case, form encoding too),
 * JSON-escaped, hex, and base64 / base64url at any offset (a secret inside a larger encoded value,
 * such as the password in `Basic base64(user:password)`, is found as well).
 */
import { randomBytes } from 'node:crypto';

/**
 * A distinctive secret: a label, 24 random hex digits and characters that URL encoding and
 * base64 change, so that each form differs from the plain value.
 */
export function secretValue(label: string): string {
  return `${label}-${randomBytes(12).toString('hex')}/+=`;
}

/** The base64 characters that encode only the secret's own bytes, for each of the 3 offsets it may sit at. */
function base64Cores(bytes: Buffer, url: boolean): string[] {
  const out: string[] = [];
  for (let lead = 0; lead < 3; lead++) {
    const encoded = Buffer.concat([Buffer.alloc(lead), bytes]).toString(url ? 'base64url' : 'base64');
    // 3-byte groups wholly inside the secret: group g covers bytes 3g..3g+2 of the padded input.
    const first = Math.ceil(lead / 3);
    const last = Math.floor((lead + bytes.length) / 3) - 1;
    if (last - first + 1 < 4) continue;
    out.push(encoded.slice(first * 4, (last + 1) * 4));
  }
  return out;
}

/** Every form of a secret this file looks for, each with its name. */
export function secretForms(secret: string): { form: string; text: string }[] {
  const bytes = Buffer.from(secret, 'utf8');
  const uri = encodeURIComponent(secret);
  const forms: { form: string; text: string }[] = [
    { form: 'plain', text: secret },
    { form: 'url-encoded', text: uri },
    { form: 'url-encoded (lower-case hex)', text: uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()) },
    { form: 'form-encoded', text: new URLSearchParams({ x: secret }).toString().slice(2) },
    { form: 'json-escaped', text: JSON.stringify(secret).slice(1, -1) },
    { form: 'json-escaped slashes', text: JSON.stringify(secret).slice(1, -1).replace(/\//g, '\\/') },
    { form: 'hex', text: bytes.toString('hex') },
    ...base64Cores(bytes, false).map((text, i) => ({ form: `base64 (offset ${i})`, text })),
    ...base64Cores(bytes, true).map((text, i) => ({ form: `base64url (offset ${i})`, text })),
  ];
  const seen = new Set<string>();
  return forms.filter((f) => f.text.length >= 8 && !seen.has(f.text) && seen.add(f.text));
}

export interface Finding {
  secret: string;
  form: string;
  where: string;
  /** Up to 60 characters either side of the find. */
  context: string;
}

/** A named secret and the places to look in. */
export interface Haystack {
  where: string;
  text: string;
}

/** Every form of every secret found in any of the texts. */
export function findSecrets(secrets: Record<string, string>, haystacks: Iterable<Haystack>): Finding[] {
  const patterns = Object.entries(secrets).flatMap(([name, value]) => secretForms(value).map((f) => ({ name, ...f })));
  const findings: Finding[] = [];
  for (const { where, text } of haystacks) {
    for (const p of patterns) {
      const i = text.indexOf(p.text);
      if (i < 0) continue;
      findings.push({ secret: p.name, form: p.form, where, context: text.slice(Math.max(0, i - 60), i + p.text.length + 60) });
    }
  }
  return findings;
}

/** Findings as lines a failing assertion prints. */
export function report(findings: Finding[]): string {
  return findings.map((f) => `${f.secret} (${f.form}) in ${f.where}: …${f.context.replace(/\s+/g, ' ')}…`).join('\n');
}
