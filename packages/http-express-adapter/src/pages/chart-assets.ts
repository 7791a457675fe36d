import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';

const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));

interface Asset {
  file: string;
  type: string;
  body: Buffer;
}

/** uPlot's own file, found from this file (src/pages in the sources, dist when built). */
function uplotFile(name: string): Buffer {
  const localRequire = createRequire(join(here, 'chart-assets.js'));
  return readFileSync(join(dirname(localRequire.resolve('uplot/package.json')), 'dist', name));
}

function hashed(stem: string, ext: 'js' | 'css', body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { file: `${stem}.${hash}.${ext}`, type: ext === 'js' ? 'text/javascript' : 'text/css', body };
}

export interface ChartAssets {
  /** The file names under the assets path, each with a hash of its content. */
  js: string;
  css: string;
  /** Answers `GET <assets path>/:file`: a known name with a year's immutable caching, anything else 404. */
  serve(req: Request, res: Response): void;
}

/** The pages' chart library (uPlot), served by the pages router itself under names that change with the content. */
export function chartAssets(): ChartAssets {
  const js = hashed('uplot', 'js', uplotFile('uPlot.iife.min.js'));
  const css = hashed('uplot', 'css', uplotFile('uPlot.min.css'));
  const byFile = new Map([js, css].map((a) => [a.file, a]));
  return {
    js: js.file,
    css: css.file,
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
