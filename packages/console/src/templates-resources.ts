import { registerFormPartials } from './forms/partials.js';
import { hbs } from './templates.js';

registerFormPartials(hbs);

/** A section's lists: each block a kind of resource with its "new" links and its items. */
export const sectionPage = hbs.compile(`{{#> layout}}
<h1>{{title}}</h1>
{{#if notice}}<p class="notice" role="status">{{notice}}</p>{{/if}}
{{#each blocks}}
<section class="panel" aria-labelledby="block-{{@index}}">
<h2 id="block-{{@index}}">{{heading}}</h2>
<div class="actions">{{#each newLinks}}<a class="button{{#if @first}} primary{{/if}}" href="{{href}}">{{label}}</a>{{/each}}</div>
{{#if items.length}}
<table>
<thead><tr><th scope="col">Name</th>{{#if showKind}}<th scope="col" class="opt">Type</th>{{/if}}<th scope="col">Actions</th></tr></thead>
<tbody>
{{#each items}}<tr data-id="{{id}}">
<td>{{title}}{{#if detail}} <span class="muted">{{detail}}</span>{{/if}}</td>
{{#if ../showKind}}<td class="opt">{{kind}}</td>{{/if}}
<td><div class="actions">{{#each links}}<a href="{{href}}">{{label}}</a>{{/each}}
{{#each posts}}<form method="post" action="{{action}}"><input type="hidden" name="_csrf" value="{{@root.layout.csrf}}"><button type="submit">{{label}}</button></form>{{/each}}</div></td>
</tr>{{/each}}
</tbody>
</table>
{{else}}<p class="muted">None yet.</p>{{/if}}
{{#if nextPage}}<p><a href="{{nextPage}}">Next page</a></p>{{/if}}
</section>
{{/each}}
{{/layout}}`);

/** A create or edit form built from the resource's schema; errors beside their fields. */
export const formPage = hbs.compile(`{{#> layout}}
<h1>{{heading}}</h1>
{{#if note}}<p class="notice" role="note">{{note.text}} <code>{{note.code}}</code></p>{{/if}}
{{#if failed}}<p class="notice bad" role="alert">Nothing was saved: {{failed}}</p>{{/if}}
{{> formIssues form.issues}}
<form method="post" action="{{action}}" class="panel" novalidate>
<input type="hidden" name="_csrf" value="{{layout.csrf}}">
{{> fields form.fields}}
<div class="actions"><button class="primary" type="submit">{{submit}}</button><a class="button" href="{{back}}">Cancel</a></div>
</form>
{{/layout}}`);

/** Asks before a delete: a GET shows it, the button POSTs. */
export const confirmPage = hbs.compile(`{{#> layout}}
<div class="panel">
<h1>{{heading}}</h1>
<p>{{text}}</p>
<form method="post" action="{{action}}" class="actions">
<input type="hidden" name="_csrf" value="{{layout.csrf}}">
<button class="danger" type="submit">{{submit}}</button>
<a class="button" href="{{back}}">Cancel</a>
</form>
</div>
{{/layout}}`);

/** The installed check types, to pick one for a new check. */
export const checkTypesPage = hbs.compile(`{{#> layout}}
<h1>New check</h1>
<ul class="panel">
{{#each types}}<li><a href="{{href}}">{{label}}</a></li>{{/each}}
</ul>
{{/layout}}`);
