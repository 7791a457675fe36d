import Handlebars from 'handlebars';

// An instance of its own, so a host's Handlebars helpers and partials never meet these templates.
// Every value goes through `{{ }}` (escaped); there is no triple-stash in the console's templates.
export const hbs = Handlebars.create();

hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);
hbs.registerHelper('ms', (n: number | null | undefined) => (n === null || n === undefined ? '–' : `${Math.round(n)} ms`));
hbs.registerHelper('pct', (n: number | null | undefined) => (n === null || n === undefined ? '–' : `${n}%`));
hbs.registerHelper('when', (iso: string | null | undefined) => (iso ? `${iso.replace('T', ' ').slice(0, 19)} UTC` : '–'));
hbs.registerHelper('json', (value: unknown) => JSON.stringify(value ?? null));

/** The navigation, in order: path under the mount, label. */
export const NAV = [
  ['/', 'Checks'],
  ['/groups', 'Groups'],
  ['/alert-channels', 'Alert channels'],
  ['/maintenance-windows', 'Maintenance'],
  ['/dashboards', 'Dashboards'],
  ['/status-pages', 'Status pages'],
] as const;

hbs.registerPartial(
  'layout',
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
{{#if layout.csrf}}<meta name="csrf-token" content="{{layout.csrf}}">{{/if}}
<title>{{title}} · Vigil</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" nonce="{{layout.nonce}}" href="{{layout.base}}/assets/{{layout.assets.uplotCss}}">
<link rel="stylesheet" nonce="{{layout.nonce}}" href="{{layout.base}}/assets/{{layout.assets.css}}">
</head>
<body{{#if layout.refresh}} data-refresh="{{layout.refresh}}"{{/if}}>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="name" href="{{layout.base}}/">Vigil</a>
{{#if layout.signedIn}}
<nav aria-label="Sections"><ul>
{{#each layout.nav}}<li><a href="{{href}}"{{#if current}} aria-current="page"{{/if}}>{{label}}</a></li>{{/each}}
</ul></nav>
{{/if}}
<div class="tools">
<button type="button" id="theme-toggle" aria-pressed="false">Dark mode</button>
{{#if layout.canSignOut}}<form method="post" action="{{layout.base}}/sign-out"><input type="hidden" name="_csrf" value="{{layout.csrf}}"><button type="submit">Sign out</button></form>{{/if}}
</div>
</header>
<main id="main">
{{> @partial-block }}
</main>
<script nonce="{{layout.nonce}}" src="{{layout.base}}/assets/{{layout.assets.uplotJs}}"></script>
<script nonce="{{layout.nonce}}" src="{{layout.base}}/assets/{{layout.assets.js}}"></script>
</body>
</html>`,
);

export const signInPage = hbs.compile(`{{#> layout}}
<div class="signin panel">
<h1>Sign in to Vigil</h1>
{{#if notice}}<p class="notice bad" role="alert">{{notice}}</p>{{/if}}
<form method="post" action="{{layout.base}}/sign-in">
<input type="hidden" name="_csrf" value="{{layout.csrf}}">
<input type="hidden" name="next" value="{{next}}">
<div class="field">
<label for="account">Account id</label>
<input id="account" name="account" autocomplete="username" required value="{{account}}">
</div>
<div class="field">
<label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required{{#if notice}} aria-invalid="true" aria-describedby="key-help"{{/if}}>
<p class="field-help" id="key-help">One of the account's API keys, as the API takes them. It is kept sealed in an HttpOnly cookie of this site for {{hours}} hours.</p>
</div>
<button class="primary" type="submit">Sign in</button>
</form>
</div>
{{/layout}}`);

export const messagePage = hbs.compile(`{{#> layout}}
<div class="panel">
<h1>{{heading}}</h1>
<p>{{text}}</p>
{{#if link}}<p><a href="{{link.href}}">{{link.label}}</a></p>{{/if}}
</div>
{{/layout}}`);

hbs.registerPartial(
  'checkRows',
  // Rows of a grid with table roles, not <tr>: a row off screen then skips layout (content-visibility), which a table row cannot.
  `{{#each rows}}<div role="row" class="row" data-check="{{id}}" data-state="{{state}}">
<div role="cell"><a href="{{@root.layout.base}}/checks/{{id}}">{{name}}</a>{{#if tags.length}}<div class="tags">{{#each tags}}<span class="tag">{{this}}</span>{{/each}}</div>{{/if}}</div>
<div role="cell"><span class="state state-{{stateClass}}">{{stateLabel}}</span></div>
<div role="cell" class="opt">{{checkType}}</div>
<div role="cell" class="num opt">{{#if lastRunAt}}<time datetime="{{lastRunAt}}">{{when lastRunAt}}</time>{{else}}<span class="muted">never</span>{{/if}}</div>
<div role="cell" class="num">{{pct availability}}</div>
<div role="cell"><div class="spark" role="img" aria-label="{{#if avg}}Average {{ms avg}}{{else}}No runs{{/if}} over the last 24 hours" data-values="{{json spark}}"></div></div>
</div>
{{else}}<div role="row" class="row empty"><div role="cell" class="muted">{{#if @root.filtered}}No check matches these filters.{{else}}No checks yet.{{/if}}</div></div>{{/each}}`,
);

export const checkRowsFragment = hbs.compile('{{> checkRows}}');

export const homePage = hbs.compile(`{{#> layout}}
<h1>Checks <span class="muted">(<span id="checks-count">{{rows.length}}</span>)</span></h1>
<div class="actions"><a class="button primary" href="{{layout.base}}/checks/new">New check</a></div>
<form id="filters" class="filters" method="get" action="{{layout.base}}/" role="search">
<label>Search<input type="search" name="q" value="{{filters.q}}" placeholder="Name"></label>
<label>Tag<select name="tag"><option value="">Any</option>{{#each options.tags}}<option{{#if (eq this @root.filters.tag)}} selected{{/if}}>{{this}}</option>{{/each}}</select></label>
<label>Type<select name="type"><option value="">Any</option>{{#each options.types}}<option{{#if (eq this @root.filters.type)}} selected{{/if}}>{{this}}</option>{{/each}}</select></label>
<label>State<select name="state"><option value="">Any</option>{{#each options.states}}<option value="{{value}}"{{#if (eq value @root.filters.state)}} selected{{/if}}>{{label}}</option>{{/each}}</select></label>
<label>Group<select name="group"><option value="">Any</option>{{#each options.groups}}<option value="{{id}}"{{#if (eq id @root.filters.group)}} selected{{/if}}>{{name}}</option>{{/each}}</select></label>
<noscript><button type="submit">Filter</button></noscript>
</form>
<div class="panel">
<div id="checks" role="table" aria-label="Checks with their state, type, last run, availability and response time over the last 24 hours">
<div role="rowgroup"><div role="row" class="row head"><div role="columnheader">Name</div><div role="columnheader">State</div><div role="columnheader" class="opt">Type</div><div role="columnheader" class="opt">Last run</div><div role="columnheader">24 h</div><div role="columnheader">Response time</div></div></div>
<div role="rowgroup" id="checks-body" aria-live="polite">{{> checkRows}}</div>
</div>
</div>
{{/layout}}`);
