import { hbs } from './templates.js';

// A check's page and its delete confirmation. As everywhere in the console, every value goes
// through `{{ }}` (escaped), and nothing is inline but the nonce'd assets of the layout.

hbs.registerPartial(
  'checkResults',
  `<table>
<caption class="sr-only">Runs of this check, newest first; open a row for its timings, assertions, logs and screenshots</caption>
<thead><tr><th scope="col">Started</th><th scope="col">Location</th><th scope="col">Outcome</th><th scope="col" class="num">Response time</th><th scope="col" class="opt">Attempts</th><th scope="col">Error</th></tr></thead>
<tbody>
{{#each results}}<tr data-result="{{id}}">
<td class="num"><time datetime="{{startedAt}}">{{when startedAt}}</time></td>
<td>{{runLocation}}</td>
<td><span class="state state-{{state}}">{{stateLabel}}</span></td>
<td class="num">{{ms responseTime}}</td>
<td class="num opt">{{attempts}}</td>
<td>{{#if errorMessage}}{{errorMessage}}{{else}}<span class="muted">–</span>{{/if}}</td>
</tr>
<tr><td colspan="6"><details>
<summary>Details of the run at {{when startedAt}}</summary>
<h3>Timings</h3>
<table><caption class="sr-only">Milliseconds per phase</caption><tbody>
{{#each phases}}<tr><th scope="row">{{name}}</th><td class="num">{{ms ms}}</td></tr>{{else}}<tr><td class="muted">No timings.</td></tr>{{/each}}
</tbody></table>
<p class="muted">{{resultType}} result, started by {{runSource}}{{#if statusCode}}, status {{statusCode}}{{/if}}.</p>
{{#if assertions.length}}<h3>Assertions</h3>
<table><thead><tr><th scope="col">Source</th><th scope="col">Property</th><th scope="col">Comparison</th><th scope="col">Target</th><th scope="col">Actual</th><th scope="col">Outcome</th></tr></thead><tbody>
{{#each assertions}}<tr><td>{{source}}</td><td>{{property}}</td><td>{{comparison}}</td><td>{{target}}</td><td>{{actual}}</td><td><span class="state state-{{#if passed}}passing{{else}}failing{{/if}}">{{#if passed}}Passed{{else}}Failed{{/if}}</span></td></tr>{{/each}}
</tbody></table>{{/if}}
{{#if logs.length}}<h3>Logs</h3>
<pre>{{#each logs}}{{#if at}}{{at}} {{/if}}{{#if level}}[{{level}}] {{/if}}{{text}}
{{/each}}</pre>{{/if}}
{{#if artifacts.length}}<h3>Screenshots and files</h3>
<ul>{{#each artifacts}}<li>{{#if image}}<a href="{{@root.layout.base}}/checks/{{@root.check.id}}/results/{{../id}}/artifacts/{{index}}"><img src="{{@root.layout.base}}/checks/{{@root.check.id}}/results/{{../id}}/artifacts/{{index}}" alt="Screenshot {{name}} of the run at {{when ../startedAt}}" width="480" loading="lazy"></a>{{else}}<a href="{{@root.layout.base}}/checks/{{@root.check.id}}/results/{{../id}}/artifacts/{{index}}" download>{{name}}</a> <span class="muted">({{contentType}})</span>{{/if}}</li>{{/each}}</ul>{{/if}}
{{#if more}}<h3>More</h3><pre>{{more}}</pre>{{/if}}
</details></td></tr>
{{else}}<tr><td colspan="6" class="muted">No runs yet.</td></tr>{{/each}}
</tbody>
</table>
{{#if pages.total}}<nav class="actions" aria-label="Pages of results">
{{#if pages.prev}}<a class="button" href="?range={{range}}&amp;page={{pages.prev}}#results">Newer runs</a>{{/if}}
<span class="muted">Page {{pages.page}} · {{pages.total}} runs</span>
{{#if pages.next}}<a class="button" href="?range={{range}}&amp;page={{pages.next}}#results">Older runs</a>{{/if}}
</nav>{{/if}}`,
);

export const checkPage = hbs.compile(`{{#> layout}}
<p><a href="{{layout.base}}/">All checks</a></p>
<h1>{{check.name}} <span class="state state-{{state}}">{{stateLabel}}</span></h1>
{{#if notice}}<p class="notice" role="status">{{notice}}</p>{{/if}}
<p class="muted">{{check.checkType}} check{{#if check.frequency}}, every {{check.frequency}} min{{/if}}{{#if check.locations.length}} from {{#each check.locations}}{{#if @index}}, {{/if}}{{this}}{{/each}}{{/if}}. Last run: {{#if lastRunAt}}<time datetime="{{lastRunAt}}">{{when lastRunAt}}</time>{{else}}never{{/if}}.</p>
{{#if check.tags.length}}<div class="tags">{{#each check.tags}}<span class="tag">{{this}}</span>{{/each}}</div>{{/if}}
<div class="actions">
<form id="run-now" method="post" action="{{layout.base}}/checks/{{check.id}}/run"><input type="hidden" name="_csrf" value="{{layout.csrf}}"><button class="primary" type="submit">Run now</button></form>
<form method="post" action="{{layout.base}}/checks/{{check.id}}/{{#if check.muted}}unmute{{else}}mute{{/if}}"><input type="hidden" name="_csrf" value="{{layout.csrf}}"><button type="submit">{{#if check.muted}}Unmute alerts{{else}}Mute alerts{{/if}}</button></form>
<form method="post" action="{{layout.base}}/checks/{{check.id}}/{{#if check.activated}}deactivate{{else}}activate{{/if}}"><input type="hidden" name="_csrf" value="{{layout.csrf}}"><button type="submit">{{#if check.activated}}Deactivate{{else}}Activate{{/if}}</button></form>
<a class="button" href="{{layout.base}}/checks/{{check.id}}/edit">Edit</a>
<a class="button" href="{{layout.base}}/checks/{{check.id}}/delete">Delete…</a>
</div>
<p id="run-progress" role="status" aria-live="polite"{{#if session}}{{#unless session.final}} data-progress="{{session.progressUrl}}"{{/unless}}{{/if}}>{{#if session}}{{session.text}}{{#unless session.final}} <a href="{{session.pageUrl}}">Check again</a>{{/unless}}{{/if}}</p>

<section class="panel" aria-labelledby="rt-heading">
<h2 id="rt-heading">Response time and availability, last {{rangeLabel}}</h2>
<nav class="actions" aria-label="Range">{{#each ranges}}<a class="button" href="?range={{key}}"{{#if current}} aria-current="true"{{/if}}>{{label}}</a>{{/each}}</nav>
<dl class="figures">
<div><dt>Availability</dt><dd>{{pct figures.availability}}</dd></div>
<div><dt>Runs</dt><dd>{{figures.runs}}</dd></div>
<div><dt>Failed</dt><dd>{{figures.failures}}</dd></div>
<div><dt>p50</dt><dd>{{ms figures.p50}}</dd></div>
<div><dt>p95</dt><dd>{{ms figures.p95}}</dd></div>
<div><dt>p99</dt><dd>{{ms figures.p99}}</dd></div>
</dl>
{{#if figures.approximate}}<p class="muted">Percentiles over older hours are estimates from hourly roll-ups.</p>{{/if}}
<div class="chart" role="img" aria-label="Response time p50, p95 and p99 over the last {{rangeLabel}}: p50 {{ms figures.p50}}, p95 {{ms figures.p95}}, p99 {{ms figures.p99}}" data-series="{{json chart}}">{{#unless chart.t.length}}No runs in this range.{{/unless}}</div>
<h3>Runs per location</h3>
<table>
<caption class="sr-only">Runs, failures, availability and response time per run location over the last {{rangeLabel}}</caption>
<thead><tr><th scope="col">Location</th><th scope="col" class="num">Runs</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Availability</th><th scope="col" class="num">p50</th><th scope="col" class="num">p95</th></tr></thead>
<tbody>{{#each locations}}<tr><td>{{runLocation}}</td><td class="num">{{runs}}</td><td class="num">{{failures}}</td><td class="num">{{pct availability}}</td><td class="num">{{ms p50}}</td><td class="num">{{ms p95}}</td></tr>{{else}}<tr><td colspan="6" class="muted">No runs in this range.</td></tr>{{/each}}</tbody>
</table>
</section>

<section class="panel" id="results" aria-labelledby="results-heading">
<h2 id="results-heading">Results</h2>
{{> checkResults}}
</section>

<section class="panel" aria-labelledby="errors-heading">
<h2 id="errors-heading">Error groups</h2>
<table>
<caption class="sr-only">This check's errors, grouped by message</caption>
<thead><tr><th scope="col">Error</th><th scope="col" class="opt">First seen</th><th scope="col">Last seen</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody>{{#each errorGroups}}<tr data-error-group="{{id}}">
<td>{{message}}</td>
<td class="num opt"><time datetime="{{firstSeen}}">{{when firstSeen}}</time></td>
<td class="num"><time datetime="{{lastSeen}}">{{when lastSeen}}</time></td>
<td>{{#if archived}}<span class="muted">Archived</span>{{else}}Open{{/if}}</td>
<td>{{#unless archived}}<form method="post" action="{{@root.layout.base}}/checks/{{@root.check.id}}/error-groups/{{id}}/archive"><input type="hidden" name="_csrf" value="{{@root.layout.csrf}}"><button type="submit" name="until" value="next">Archive</button> <button type="submit" name="until" value="forever">Archive for ever</button></form>{{/unless}}</td>
</tr>{{else}}<tr><td colspan="5" class="muted">No errors.</td></tr>{{/each}}</tbody>
</table>
</section>

<section class="panel" aria-labelledby="alerts-heading">
<h2 id="alerts-heading">Alert history</h2>
<table>
<caption class="sr-only">Alerts this check sent, newest first, with each delivery attempt</caption>
<thead><tr><th scope="col">Raised</th><th scope="col">Alert</th><th scope="col">Channel</th><th scope="col">Delivery</th><th scope="col">Attempts</th></tr></thead>
<tbody>{{#each alerts}}<tr data-alert="{{id}}">
<td class="num"><time datetime="{{created_at}}">{{when created_at}}</time></td>
<td>{{alertType}}{{#if reminder}} (reminder){{/if}}{{#if errorMessage}}<div class="muted">{{errorMessage}}</div>{{/if}}{{#if runLocation}}<div class="muted">{{runLocation}}</div>{{/if}}</td>
<td>{{#if channelKey}}<a href="{{@root.layout.base}}/r/{{channelKey}}/{{channelId}}/edit">{{channelType}} #{{channelId}}</a>{{else}}Deleted channel #{{channelId}}{{/if}}</td>
<td><span class="state state-{{state}}">{{stateLabel}}</span></td>
<td>{{#if log.length}}<details><summary>{{log.length}} attempt(s)</summary><ul>{{#each log}}<li><time datetime="{{at}}">{{when at}}</time>: {{#if ok}}ok{{else}}failed{{/if}}{{#if detail}} — {{detail}}{{/if}}</li>{{/each}}</ul></details>{{else}}<span class="muted">none yet</span>{{/if}}</td>
</tr>{{else}}<tr><td colspan="5" class="muted">No alerts sent.</td></tr>{{/each}}</tbody>
</table>
</section>
{{/layout}}`);

export const deleteCheckPage = hbs.compile(`{{#> layout}}
<div class="panel">
<h1>Delete {{check.name}}?</h1>
<p>The check stops running and is removed with its schedule, status and alert subscriptions. This cannot be undone.</p>
<div class="actions">
<form method="post" action="{{layout.base}}/checks/{{check.id}}/delete"><input type="hidden" name="_csrf" value="{{layout.csrf}}"><button class="danger" type="submit">Delete the check</button></form>
<a class="button" href="{{layout.base}}/checks/{{check.id}}">Keep it</a>
</div>
</div>
{{/layout}}`);
