import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { NextFunction, Request, Response } from 'express';
import { localRequire } from '../local-require.js';
import { CHART_SCRIPT } from './chart-script.js';

/** A file the pages load from `<mount>/assets/`, named by a hash of its content. */
interface Asset {
  name: string;
  type: string;
  body: Buffer;
}

/** The URLs (under the mount path) of the chart files, for the templates. */
export interface ChartAssetNames {
  uplotJs: string;
  uplotCss: string;
  charts: string;
}

// Names of the shape the pages use: one of them with another hash is an old or made-up version (404);
// any other name under /assets is left to the host.
const ASSET_NAME = /^(uplot\.[0-9a-f]+\.min\.(js|css)|charts\.[0-9a-f]+\.js)$/;

function asset(stem: string, ext: string, type: string, body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { name: `${stem}.${hash}.${ext}`, type, body };
}

/**
 * uPlot's browser build and stylesheet and the script that draws the pages' charts, read once.
 * A content hash in each name lets browsers keep a file for a year: a new version is a new URL.
 */
export function chartAssets(): { names: ChartAssetNames; serve: (req: Request, res: Response, next: NextFunction) => void } {
  let uplotJs: Buffer;
  let uplotCss: Buffer;
  try {
    uplotJs = readFileSync(localRequire.resolve('uplot/dist/uPlot.iife.min.js'));
    uplotCss = readFileSync(localRequire.resolve('uplot/dist/uPlot.min.css'));
  } catch (err) {
    throw new Error('vigilPages: the pages\' charts need the uplot package; install it', { cause: err });
  }
  const files = [
    asset('uplot', 'min.js', 'text/javascript; charset=utf-8', uplotJs),
    asset('uplot', 'min.css', 'text/css; charset=utf-8', uplotCss),
    asset('charts', 'js', 'text/javascript; charset=utf-8', Buffer.from(CHART_SCRIPT)),
  ];
  const byName = new Map(files.map((f) => [f.name, f]));
  const [js, css, charts] = files.map((f) => f.name) as [string, string, string];
  return {
    names: { uplotJs: js, uplotCss: css, charts },
    serve(req, res, next) {
      const name = String(req.params.name);
      const file = byName.get(name);
      if (!file && !ASSET_NAME.test(name)) return next();
      res.set({ 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'", 'Cross-Origin-Resource-Policy': 'same-origin' });
      if (!file) {
        res.status(404).set('Cache-Control', 'no-cache').type('text/plain').send('Not found');
        return;
      }
      res.set('Cache-Control', 'public, max-age=31536000, immutable').type(file.type).send(file.body);
    },
  };
}
