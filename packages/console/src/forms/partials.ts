import type HandlebarsNamespace from 'handlebars';
import type { FieldKind } from './fields.js';

// Logic-less on purpose: every value goes through {{ }} (escaped), nothing is inline script or
// style (the console's CSP forbids both), and a field's help and error texts are tied to its
// input by aria-describedby. The classes: field (and field-<kind>), field-help, field-error,
// field-required, field-set, form-issues, code.

const ATTRS = `id="{{id}}" name="{{name}}"{{#if required}} required{{/if}}{{#if error}} aria-invalid="true"{{/if}}`
  + `{{#if describedBy}} aria-describedby="{{describedBy}}"{{/if}}`;

const LABEL = `<label for="{{id}}">{{label}}{{#if required}} <span class="field-required" aria-hidden="true">*</span>{{/if}}</label>`;

const NOTES = `{{#if help}}<p class="field-help" id="{{id}}-help">{{help}}</p>{{/if}}`
  + `{{#if error}}<p class="field-error" id="{{id}}-error">{{error}}</p>{{/if}}`;

// A textarea drops a newline that directly follows its start tag: one is written so the value's own survives.
const TEXTAREA = (extra: string) => `<textarea ${ATTRS}${extra}>\n{{value}}</textarea>`;

const FIELD = `{{#each this}}
{{#if (formFieldIs kind "fieldset")}}
<fieldset class="field field-set"{{#if describedBy}} aria-describedby="{{describedBy}}"{{/if}}>
<legend>{{label}}{{#if required}} <span class="field-required" aria-hidden="true">*</span>{{/if}}</legend>
${NOTES}
{{> fields children}}
</fieldset>
{{else if (formFieldIs kind "checkbox")}}
<div class="field field-checkbox">
<input type="hidden" name="{{name}}" value="false">
<input type="checkbox" id="{{id}}" name="{{name}}" value="true"{{#if value}} checked{{/if}}{{#if error}} aria-invalid="true"{{/if}}{{#if describedBy}} aria-describedby="{{describedBy}}"{{/if}}>
<label for="{{id}}">{{label}}</label>
${NOTES}
</div>
{{else}}
<div class="field field-{{kind}}">
${LABEL}
{{#if (formFieldIs kind "select")}}
{{#if multiple}}<input type="hidden" name="{{name}}" value="">{{/if}}
<select ${ATTRS}{{#if multiple}} multiple{{/if}}>
{{#each options}}<option value="{{value}}"{{#if selected}} selected{{/if}}>{{label}}</option>
{{/each}}
</select>
{{else if (formFieldIs kind "code")}}
${TEXTAREA(' class="code" spellcheck="false" rows="16"')}
{{else if (formFieldIs kind "json")}}
${TEXTAREA(' class="json" spellcheck="false" rows="6"')}
{{else if (formFieldIs kind "list")}}
${TEXTAREA(' rows="4"')}
{{else if (formFieldIs kind "textarea")}}
${TEXTAREA(' rows="4"')}
{{else if (formFieldIs kind "number")}}
<input type="number" ${ATTRS} value="{{value}}"{{#if min includeZero=true}} min="{{min}}"{{/if}}{{#if max includeZero=true}} max="{{max}}"{{/if}} step="{{#if step}}{{step}}{{else}}any{{/if}}">
{{else if (formFieldIs kind "datetime")}}
<input type="datetime-local" ${ATTRS} value="{{value}}" step="1">
{{else if (formFieldIs kind "password")}}
<input type="password" ${ATTRS} value="{{value}}" autocomplete="off"{{#if maxlength}} maxlength="{{maxlength}}"{{/if}}>
{{else}}
<input type="text" ${ATTRS} value="{{value}}"{{#if maxlength}} maxlength="{{maxlength}}"{{/if}}>
{{/if}}
${NOTES}
</div>
{{/if}}
{{/each}}`;

const FORM_ISSUES = `{{#if this.length}}<div class="form-issues" role="alert"><ul>
{{#each this}}<li>{{#if path}}{{path}}: {{/if}}{{message}}</li>
{{/each}}</ul></div>{{/if}}`;

/**
 * Registers the partials `fields` (`{{> fields form.fields}}`: a FieldModel[], fieldsets
 * recursively) and `formIssues` (`{{> formIssues form.issues}}`: the issues no field names), and
 * the helper `formFieldIs` they use.
 */
export function registerFormPartials(hbs: Pick<typeof HandlebarsNamespace, 'registerPartial' | 'registerHelper'>): void {
  hbs.registerHelper('formFieldIs', (kind: FieldKind, expected: FieldKind) => kind === expected);
  hbs.registerPartial('fields', FIELD);
  hbs.registerPartial('formIssues', FORM_ISSUES);
}
