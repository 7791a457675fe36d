import { dirname, join } from 'node:path';
import express, { type RequestHandler, type Response, type Router } from 'express';
import { localRequire } from './local-require.js';

// The interactive API reference: Swagger UI, served from the host (swagger-ui-dist's files, never
// a CDN), rendering the router's own `openapi.json`.

/** swagger-ui-dist's folder and version, found from this package. */
function swaggerUiDist(): { dir: string; version: string } {
  let manifest: string;
  try {
    manifest = localRequire.resolve('swagger-ui-dist/package.json');
  } catch (err) {
    throw new Error('vigilRouter: the API reference at /docs needs the swagger-ui-dist package; install it, or pass `docs: false`', { cause: err });
  }
  return { dir: dirname(manifest), version: (localRequire(manifest) as { version: string }).version };
}

/** The files of swagger-ui-dist the page loads (and the source maps they name), nothing else of it. */
const ASSETS = ['swagger-ui-bundle.js', 'swagger-ui-bundle.js.map', 'swagger-ui.css', 'swagger-ui.css.map', 'favicon-32x32.png', 'favicon-16x16.png'] as const;

/**
 * Everything the page needs comes from its own origin: no inline script or style (Swagger UI sets
 * its few dynamic styles through the DOM, which style-src does not govern), images only its own or
 * inline (the stylesheet's icons are data: URLs), and fetches only to the host (the document and
 * "Try it out"). No form posts, no <base>, no framing.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(res: Response): void {
  res.set({
    'Content-Security-Policy': DOCS_CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  });
}

// Relative URLs: the page is always `<mount>/docs/`, so they hold at any mount path and behind a
// proxy that adds or strips a prefix. `?v=` names swagger-ui-dist's version, so an upgrade changes
// the URLs a browser cached.
const page = (v: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Vigil API reference</title>
<link rel="stylesheet" href="swagger-ui.css?v=${v}">
<link rel="icon" type="image/png" sizes="32x32" href="favicon-32x32.png?v=${v}">
<link rel="icon" type="image/png" sizes="16x16" href="favicon-16x16.png?v=${v}">
</head>
<body>
<noscript><p>The API reference needs JavaScript. The OpenAPI document itself is at <a href="../openapi.json">../openapi.json</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="swagger-ui-bundle.js?v=${v}"></script>
<script src="init.js?v=${v}"></script>
</body>
</html>
`;

/**
 * Starts Swagger UI on the router's document, one level up from the page. The document's `servers`
 * entry is the router's mount path, so "Try it out" calls the API where the host mounted it, with
 * the key and account entered under "Authorize" (kept in the page only, never stored).
 */
const INIT = `'use strict';
window.ui = SwaggerUIBundle({
  url: new URL('../openapi.json', window.location.href).href,
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  deepLinking: true,
  persistAuthorization: false,
  // No badge from validator.swagger.io: nothing leaves the host.
  validatorUrl: null,
});
`;

/**
 * The router of `GET <mount>/docs/`: the page, its init script and swagger-ui-dist's bundle and
 * stylesheet. Public like the document; `named(template)` labels each route for the request metrics.
 * `<mount>/docs` redirects to `docs/`, where the page's relative URLs resolve.
 */
export function apiDocs(named: (template: string) => RequestHandler[]): Router {
  const { dir, version } = swaggerUiDist();
  const html = page(encodeURIComponent(version));
  const docs = express.Router({ strict: true });

  docs.get('/', ...named('/docs/'), (req, res) => {
    securityHeaders(res);
    // `/docs` and `/docs/` both reach this route; only the second may hold the page.
    const path = req.originalUrl.split('?')[0]!;
    if (!path.endsWith('/')) {
      res.set('Cache-Control', 'no-cache').redirect(301, `${path.slice(path.lastIndexOf('/') + 1)}/`);
      return;
    }
    res.set('Cache-Control', 'no-cache').type('html').send(html);
  });

  docs.get('/init.js', ...named('/docs/init.js'), (_req, res) => {
    securityHeaders(res);
    res.set('Cache-Control', 'no-cache').type('text/javascript').send(INIT);
  });

  for (const name of ASSETS) {
    docs.get(`/${name}`, ...named(`/docs/${name}`), (req, res, next) => {
      securityHeaders(res);
      // Cached for a year when asked for by this version's URL, else revalidated each time.
      const current = req.query.v === version;
      res.set('Cache-Control', current ? 'public, max-age=31536000, immutable' : 'no-cache');
      res.sendFile(join(dir, name), { cacheControl: false }, (err) => {
        if (err && !res.headersSent) next(err);
      });
    });
  }
  return docs;
}
