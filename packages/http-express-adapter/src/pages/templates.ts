import Handlebars from 'handlebars';

// An instance of its own, so a host's Handlebars helpers and partials never meet these templates.
// `{{ }}` escapes every value; there is no `{{{ }}}` below except for CSS, script and JSON text that
// the adapter made itself (styleText keeps user CSS inside its element, jsonScriptText the chart data).
const hbs = Handlebars.create();

const STATE_LABELS: Record<string, string> = {
  PASSING: 'Passing', FAILING: 'Failing', DEGRADED: 'Degraded', PAUSED: 'Paused', PENDING: 'No runs yet',
  OPERATIONAL: 'Operational', DISRUPTED: 'Disrupted', MAINTENANCE: 'Maintenance',
};
const OVERALL_LABELS: Record<string, string> = {
  OPERATIONAL: 'All systems operational', DISRUPTED: 'Some systems are disrupted', MAINTENANCE: 'Maintenance in progress',
};

hbs.registerHelper('stateLabel', (s: string) => STATE_LABELS[s] ?? s);
hbs.registerHelper('overallLabel', (s: string) => OVERALL_LABELS[s] ?? s);
hbs.registerHelper('ms', (n: number | null) => (n === null || n === undefined ? '–' : `${n} ms`));
hbs.registerHelper('pct', (n: number | null) => (n === null || n === undefined ? '–' : `${n}%`));
hbs.registerHelper('when', (iso: string | null) => (iso ? iso.replace('T', ' ').slice(0, 16) + ' UTC' : '–'));
hbs.registerHelper('lower', (s: string) => String(s).toLowerCase());
hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);

hbs.registerPartial(
  'layout',
  `<!doctype html>
<html lang="en"{{#if theme}} data-theme="{{theme}}"{{/if}}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
{{#if favicon}}<link rel="icon" href="{{favicon}}">{{else}}<link rel="icon" href="data:,">{{/if}}
{{#if refreshSeconds}}<noscript><meta http-equiv="refresh" content="{{refreshSeconds}}"></noscript>{{/if}}
<style nonce="{{nonce}}">{{{css}}}</style>
{{#if chartAssets}}<link rel="stylesheet" nonce="{{nonce}}" href="{{chartAssets.uplotCss}}">{{/if}}
{{#if customCss}}<style nonce="{{nonce}}" id="custom-css">{{{customCss}}}</style>{{/if}}
</head>
<body{{#each data}} data-{{@key}}="{{this}}"{{/each}}>
<a class="skip" href="#main">Skip to content</a>
{{> @partial-block }}
{{#if script}}<script nonce="{{nonce}}">{{{script}}}</script>{{/if}}
{{#if chartAssets}}<script type="application/json" id="vigil-chart-data">{{{chartJson}}}</script>
<script nonce="{{nonce}}" src="{{chartAssets.uplotJs}}" defer></script>
<script nonce="{{nonce}}" src="{{chartAssets.charts}}" defer></script>{{/if}}
</body>
</html>`,
);

hbs.registerPartial(
  'brand',
  `<div class="brand">
{{#if logo}}{{#if link}}<a href="{{link}}" rel="noopener noreferrer"><img src="{{logo}}" alt="{{logoAlt}}"></a>{{else}}<img src="{{logo}}" alt="{{logoAlt}}">{{/if}}{{/if}}
<h1>{{heading}}</h1>
{{#if toggle}}<button type="button" class="theme" id="theme-toggle" aria-pressed="false">Dark mode</button>{{/if}}
</div>`,
);

hbs.registerPartial(
  'figures',
  `<dl class="figures">
<div><dt>24 h</dt><dd>{{pct successRatio}}</dd></div>
{{#if @root.d.showP95}}<div><dt>p95</dt><dd class="p95">{{ms p95}}</dd></div>{{/if}}
{{#if @root.d.showP99}}<div><dt>p99</dt><dd class="p99">{{ms p99}}</dd></div>{{/if}}
</dl>`,
);

export const dashboardTemplate = hbs.compile(
  `{{#> layout}}
<header class="top"><div class="wrap {{widthClass}}">
{{#if d.showHeader}}{{> brand heading=d.header logo=d.logo link=d.link logoAlt=logoAlt}}
{{#if d.description}}<p class="muted">{{d.description}}</p>{{/if}}{{else}}<h1 class="sr-only">{{d.header}}</h1>{{/if}}
</div></header>
<main id="main" class="wrap {{widthClass}}">
{{#if incidents.length}}
<section aria-labelledby="incidents-h"><h2 id="incidents-h">Incidents</h2>
{{#each incidents}}<article class="card incident{{#unless active}} resolved{{/unless}}" data-incident="{{id}}">
<h3>{{name}}</h3><p class="muted">{{lower impact}} impact · {{#if upcoming}}starts {{when startedAt}}{{else}}{{lower status}}{{#if stoppedAt}} · resolved {{when stoppedAt}}{{/if}}{{/if}}</p>
<ol>{{#each updates}}<li><strong>{{lower status}}</strong> <time datetime="{{created_at}}">{{when created_at}}</time><br>{{description}}</li>{{/each}}</ol>
</article>{{/each}}
</section>{{/if}}
<section aria-labelledby="checks-h">
<h2 id="checks-h">Checks</h2>
<ul class="summary" aria-label="Checks by state">
{{#each summary}}<li class="s-{{state}}" data-count="{{state}}">{{count}} {{lower (stateLabel state)}}</li>{{/each}}
</ul>
{{#if checks.length}}
<ul class="grid">
{{#each checks}}<li class="card check" data-check="{{id}}" data-state="{{state}}">
<h3>{{#if ../runLinks}}<a href="{{../runBase}}/checks/{{id}}{{../keyQuery}}">{{name}}</a>{{else}}{{name}}{{/if}}</h3>
<span class="state s-{{state}}">{{stateLabel state}}</span>
{{#if ../d.showGroupNames}}{{#if groupName}}<span class="muted group"> · {{groupName}}</span>{{/if}}{{/if}}
{{> figures}}
{{#if ../sparkline}}<div class="chart" data-chart="{{chart}}" role="img" aria-label="{{chartLabel}}" hidden></div>{{/if}}
{{#if ../expand}}<p class="muted detail">{{checkType}} · {{runs24h}} runs in 24 h · avg {{ms avg}} · last run {{when lastRunAt}}{{#if lastRunLocation}} in {{lastRunLocation}}{{/if}}</p>
<div class="bar" role="img" aria-label="Last 24 hours by the hour">{{#each hours}}<span class="{{cls}}" title="{{when start}}: {{runs}} runs, {{failures}} failed"></span>{{/each}}</div>{{/if}}
{{#unless ../d.hideTags}}{{#if tags.length}}<ul class="tags" aria-label="Tags">{{#each tags}}<li>{{this}}</li>{{/each}}</ul>{{/if}}{{/unless}}
</li>{{/each}}
</ul>
{{else}}<p class="muted">No checks match this dashboard.</p>{{/if}}
{{#if pagination}}<nav class="pages" aria-label="Pages"><ul>
{{#each pagination}}<li>{{#if current}}<span aria-current="page">{{n}}</span>{{else}}<a href="{{href}}">{{n}}</a>{{/if}}</li>{{/each}}
</ul></nav>{{/if}}
</section>
</main>
<footer class="wrap {{widthClass}}"><p>Updated <time datetime="{{generatedAt}}">{{when generatedAt}}</time>{{#if refreshSeconds}}; refreshes every {{refreshSeconds}} s{{/if}}.</p></footer>
{{/layout}}`,
);

export const checkRunsTemplate = hbs.compile(
  `{{#> layout}}
<header class="top"><div class="wrap {{widthClass}}">{{> brand heading=check.name logo=d.logo link=d.link logoAlt=logoAlt}}
<p><a href="{{back}}">Back to {{d.header}}</a></p></div></header>
<main id="main" class="wrap {{widthClass}}">
<span class="state s-{{check.state}}">{{stateLabel check.state}}</span>
{{> figures check}}
<h2>Latest runs</h2>
{{#if results.length}}<table><caption class="sr-only">Latest runs of {{check.name}}</caption>
<thead><tr><th scope="col">Started</th><th scope="col">Location</th><th scope="col">Result</th><th scope="col">Time</th><th scope="col">Error</th></tr></thead>
<tbody>{{#each results}}<tr data-result="{{id}}"><td>{{when startedAt}}</td><td>{{runLocation}}</td><td><span class="state s-{{state}}">{{stateLabel state}}</span></td><td>{{ms responseTime}}</td><td class="err">{{errorMessage}}</td></tr>{{/each}}</tbody></table>
{{else}}<p class="muted">No runs yet.</p>{{/if}}
</main>
{{/layout}}`,
);

export const statusPageTemplate = hbs.compile(
  `{{#> layout}}
<header class="top"><div class="wrap w-960">{{> brand heading=p.name logo=p.logo link=p.redirectTo logoAlt=logoAlt toggle=true}}
{{#if p.description}}<p class="muted">{{p.description}}</p>{{/if}}</div></header>
<main id="main" class="wrap w-960">
<p class="banner s-{{state}}" role="status" data-overall="{{state}}"><span class="state">{{overallLabel state}}</span></p>
{{#if activeIncidents.length}}<section aria-labelledby="active-h"><h2 id="active-h">Active incidents</h2>
{{#each activeIncidents}}{{> incident}}{{/each}}</section>{{/if}}
{{#each cards}}<section class="card" aria-labelledby="card-{{@index}}" data-card="{{id}}"><h2 id="card-{{@index}}">{{name}}</h2>
{{#each services}}<div class="service" data-service="{{id}}" data-state="{{state}}">
<h3>{{name}} <span class="state s-{{state}}">{{stateLabel state}}</span></h3>
<div class="bar" id="bar-{{chart}}" role="img" aria-label="{{name}}: {{pct uptime}} uptime over {{../../days}} days">{{#each bars}}<span class="{{cls}}" title="{{date}}: {{label}}"></span>{{/each}}</div>
<div class="chart" data-chart="{{chart}}" data-fallback="bar-{{chart}}" role="img" aria-label="{{name}}: {{pct uptime}} uptime over {{../../days}} days" hidden></div>
<div class="bar-legend muted"><span>{{../../days}} days ago</span><span>{{pct uptime}} uptime</span><span>Today</span></div>
</div>{{/each}}
{{#unless services.length}}<p class="muted">No services on this card.</p>{{/unless}}
</section>{{/each}}
<section aria-labelledby="past-h"><h2 id="past-h">Past incidents</h2>
{{#each pastIncidents}}{{> incident}}{{else}}<p class="muted">No incidents in the last {{days}} days.</p>{{/each}}</section>
{{#if subscribeAction}}<section aria-labelledby="subscribe-h"><h2 id="subscribe-h">Get incident updates by email</h2>
<form class="key" method="post" action="{{subscribeAction}}"><label for="subscribe-email">Email</label><input id="subscribe-email" name="email" type="email" autocomplete="email" maxlength="254" required><button type="submit" class="theme">Subscribe</button></form></section>{{/if}}
</main>
<footer class="wrap w-960"><p>Updated <time datetime="{{generatedAt}}">{{when generatedAt}}</time>.{{#unless p.whiteLabel}} Powered by Vigil.{{/unless}}</p></footer>
{{/layout}}`,
);

hbs.registerPartial(
  'incident',
  `<article class="card incident{{#if stoppedAt}} resolved{{/if}}" data-incident="{{id}}">
<h3>{{name}}</h3><p class="muted">{{lower status}}{{#if services.length}} · {{#each services}}{{name}}{{#unless @last}}, {{/unless}}{{/each}}{{/if}}</p>
<ol>{{#each incidentUpdates}}<li><strong>{{lower status}}</strong> <time datetime="{{publicIncidentUpdateDate}}">{{when publicIncidentUpdateDate}}</time><br>{{description}}</li>{{/each}}</ol>
</article>`,
);

export const messageTemplate = hbs.compile(
  `{{#> layout}}
<main id="main" class="wrap w-960"><h1>{{heading}}</h1><p>{{text}}</p>
{{#if askKey}}<form class="key" method="get"><label for="key">Access key</label><input id="key" name="key" type="password" autocomplete="off" required><button type="submit" class="theme">Open</button></form>{{/if}}
{{#if confirmForm}}<form class="key" method="post" action="{{confirmForm.action}}"><input type="hidden" name="token" value="{{confirmForm.token}}"><button type="submit" class="theme">{{confirmForm.label}}</button></form>{{/if}}
</main>
{{/layout}}`,
);
