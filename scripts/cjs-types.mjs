// tsup names the CommonJS declarations `.d.ts` in a package that is not "type": "module" (its dts
// worker cannot take an outExtension function). Rename them `.d.cts`, pointing their relative
// imports at `.cjs`, so that `require` resolves its own declarations through the exports map.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dist = join(process.cwd(), 'dist');
for (const file of readdirSync(dist)) {
  if (!file.endsWith('.d.ts')) continue;
  const text = readFileSync(join(dist, file), 'utf8').replace(/(from\s+['"]\.\/[^'"]+)\.js(['"])/g, '$1.cjs$2');
  writeFileSync(join(dist, file.replace(/\.d\.ts$/, '.d.cts')), text);
  rmSync(join(dist, file));
}
