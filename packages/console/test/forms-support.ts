import { createVigil, defineCheckType, integerBetween, type Vigil } from '@vigil/core';
import { FakeRunner, FakeTransport, memoryStorage } from '@vigil/core/testing';
import * as v from 'valibot';
import type { FieldModel, Posted } from '../src/forms/fields.js';

/** A check type a plugin adds, as a plugin author defines one. */
export const smtpCheckType = defineCheckType({
  checkType: 'SMTP',
  label: 'SMTP',
  entries: {
    host: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty')),
    port: v.optional(integerBetween(1, 65535), 25),
    starttls: v.optional(v.boolean(), true),
    expectBanner: v.optional(v.nullable(v.string()), null),
  },
});

export async function setup(): Promise<{ vigil: Vigil; accountId: string; webhook: FakeTransport }> {
  const webhook = new FakeTransport('WEBHOOK');
  const vigil = createVigil({
    storage: memoryStorage(),
    secretKey: 'c'.repeat(64),
    runners: ['TCP', 'API', 'BROWSER', 'SMTP'].map((t) => new FakeRunner(t)),
    checkTypes: [smtpCheckType],
    transports: [webhook],
  });
  return { vigil, accountId: (await vigil.accounts.ensure()).id, webhook };
}

/**
 * What a browser posts for these fields, as the `fields` partial renders them: a checkbox's
 * hidden "false" before its "true", a multiple select's empty marker, a single select with
 * nothing selected sends its first option.
 */
export function submit(fields: readonly FieldModel[], typed: Posted = {}): Posted {
  const out: Posted = {};
  const walk = (list: readonly FieldModel[]) => {
    for (const f of list) {
      if (f.kind === 'fieldset') walk(f.children ?? []);
      else if (f.kind === 'checkbox') out[f.name] = f.value === true ? ['false', 'true'] : 'false';
      else if (f.kind === 'select' && f.multiple) out[f.name] = ['', ...f.options!.filter((o) => o.selected).map((o) => o.value)];
      else if (f.kind === 'select') out[f.name] = (f.options!.find((o) => o.selected) ?? f.options![0])!.value;
      // Browsers send a textarea's line breaks as CRLF.
      else out[f.name] = String(f.value).replace(/\n/g, '\r\n');
    }
  };
  walk(fields);
  return { ...out, ...typed };
}

export function findField(fields: readonly FieldModel[], name: string): FieldModel {
  for (const f of fields) {
    if (f.name === name) return f;
    if (f.children && name.startsWith(`${f.name}.`)) return findField(f.children, name);
  }
  throw new Error(`no field ${name}`);
}
