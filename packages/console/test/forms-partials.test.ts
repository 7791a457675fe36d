import Handlebars from 'handlebars';
import { ValidationError } from '@vigil/core';
import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { formFields } from '../src/forms/fields.js';
import { registerFormPartials } from '../src/forms/partials.js';

const schema = v.object({
  name: v.pipe(v.string(), v.maxLength(255)),
  note: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(10_000))), null),
  port: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535)),
  enabled: v.optional(v.boolean(), true),
  unit: v.picklist(['seconds', 'minutes']),
  regions: v.optional(v.array(v.picklist(['eu', 'us'])), () => []),
  script: v.optional(v.string(), ''),
  inner: v.object({ token: v.optional(v.string()) }),
});

function render(values: unknown, issues = new ValidationError([]).issues) {
  const hbs = Handlebars.create();
  registerFormPartials(hbs);
  const form = formFields(schema, values, issues, { kinds: { script: 'code' } });
  return hbs.compile('{{> formIssues issues}}<form method="post">{{> fields fields}}</form>')(form);
}

describe('the fields partial', () => {
  it('escapes every value: a <script> and quotes stay text', () => {
    const evil = '"><script>alert("x")</script>';
    const html = render({ name: evil, note: `</textarea>${evil}`, script: evil, inner: { token: evil } }, [{ path: 'name', message: evil }, { path: '', message: evil }]);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain(evil);
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"');
    expect(html).toContain('&lt;/textarea&gt;');
  });

  it('ties labels, help and errors to their inputs, with no inline handlers or styles', () => {
    const html = render({ inner: {} }, [{ path: 'port', message: 'must be between 0 and 65535' }, { path: 'elsewhere', message: 'is wrong' }]);
    expect(html).toContain('<label for="f-port">Port <span class="field-required" aria-hidden="true">*</span></label>');
    expect(html).toMatch(/<input type="number" id="f-port" name="port" required aria-invalid="true" aria-describedby="f-port-error" value="" min="0" max="65535" step="1">/);
    expect(html).toContain('<p class="field-error" id="f-port-error">must be between 0 and 65535</p>');
    expect(html).toContain('<div class="form-issues" role="alert"><ul>\n<li>elsewhere: is wrong</li>');
    // A checkbox posts "false" through its hidden marker when it is unchecked.
    expect(html).toContain('<input type="hidden" name="enabled" value="false">\n<input type="checkbox" id="f-enabled" name="enabled" value="true" checked>');
    expect(html).toContain('<textarea id="f-script" name="script" class="code" spellcheck="false" rows="16">');
    expect(html).toMatch(/<input type="hidden" name="regions" value="">\n<select id="f-regions" name="regions" aria-describedby="f-regions-help" multiple>/);
    expect(html).toContain('<fieldset class="field field-set">\n<legend>Inner <span class="field-required" aria-hidden="true">*</span></legend>');
    expect(html).toContain('<input type="password" id="f-inner.token" name="inner.token"');
    expect(html).not.toMatch(/\son[a-z]+=|style=|\{\{\{/);
  });
});
