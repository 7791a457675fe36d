import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';
import { CONSOLE_CSS } from './styles.js';
import { CONSOLE_SCRIPT } from './client-script.js';

const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));

export interface Asset {
  /** `uplot.3f2a9c1d0b.js`: the name holds a hash of the content, so it may be cached for ever. */
  file: string;
  type: 'text/javascript' | 'text/css';
  body: Buffer;
}

/** uPlot's own files, found from this file (src in the sources, dist when built). */
function uplotFile(name: string): Buffer {
  const localRequire = createRequire(join(here, 'assets.js'));
  return readFileSync(join(dirname(localRequire.resolve('uplot/package.json')), 'dist', name));
}

function asset(stem: string, type: Asset['type'], body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { file: `${stem}.${hash}.${type === 'text/css' ? 'css' : 'js'}`, type, body };
}

export interface ConsoleAssets {
  uplotJs: Asset;
  uplotCss: Asset;
  css: Asset;
  js: Asset;
  /** Answers `GET /assets/:file`: a known name with a year's immutable caching, anything else 404. */
  serve(req: Request, res: Response): void;
}

/** The console's scripts and styles: uPlot's files and its own, every one from this router, none from a CDN. */
export function consoleAssets(): ConsoleAssets {
  const list = {
    uplotJs: asset('uplot', 'text/javascript', uplotFile('uPlot.iife.min.js')),
    uplotCss: asset('uplot', 'text/css', uplotFile('uPlot.min.css')),
    css: asset('console', 'text/css', Buffer.from(CONSOLE_CSS)),
    js: asset('console', 'text/javascript', Buffer.from(CONSOLE_SCRIPT)),
  };
  const byFile = new Map(Object.values(list).map((a) => [a.file, a]));
  return {
    ...list,
    serve(req, res) {
      const found = byFile.get(String(req.params.file));
      res.set({ 'X-Content-Type-Options': 'nosniff', 'Cross-Origin-Resource-Policy': 'same-origin' });
      if (!found) {
        res.status(404).type('text/plain').set('Cache-Control', 'no-store').send('Not found');
        return;
      }
      res.set('Cache-Control', 'public, max-age=31536000, immutable').type(found.type).send(found.body);
    },
  };
}
