import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The route table and the OpenAPI document know no web framework (src/api): Express is the
// routers'. And the adapter's modules import one another without a cycle.

const src = fileURLToPath(new URL('../src/', import.meta.url));

/** The module specifiers a source file imports or re-exports from. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'|^import\s+'([^']+)'/gm)].map((m) => m[1] ?? m[2]!);
}

/** Every source file under src, relative to it. */
const sources = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).sort();

describe('layers of the adapter', () => {
  it('the route table and the OpenAPI builder import only core, valibot and one another', () => {
    const api = sources.filter((f) => f.startsWith('api/'));
    expect(api).toEqual(expect.arrayContaining(['api/route-table.ts', 'api/openapi.ts']));
    for (const file of api) {
      const outside = importsOf(join(src, file)).filter((m) => !/^(\.\/|@vigil\/core$|valibot$|@valibot\/)/.test(m));
      expect(outside, `what ${file} imports besides core, valibot and api/`).toEqual([]);
    }
  });

  it('no module of the adapter imports itself back through another', () => {
    const graph = new Map(sources.map((file) => [
      file,
      importsOf(join(src, file))
        .filter((m) => m.startsWith('.'))
        .map((m) => relative(src, join(src, dirname(file), m.replace(/\.js$/, '.ts')))),
    ]));
    const cycles: string[] = [];
    const walk = (file: string, path: string[]) => {
      if (path.includes(file)) {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      for (const next of graph.get(file) ?? []) walk(next, [...path, file]);
    };
    for (const file of sources) walk(file, []);
    expect(cycles).toEqual([]);
  });

  it('reads the imports of a file', () => {
    expect(importsOf(join(src, 'router.ts'))).toEqual(expect.arrayContaining(['express', './api/route-table.js', './vigil-from.js']));
    expect(importsOf(join(src, 'api/route-table.ts'))).toEqual(expect.arrayContaining(['@vigil/core', './routes-checks.js']));
  });
});
