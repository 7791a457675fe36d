import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The adapter's own dependencies (swagger-ui-dist, uplot) are found from this file: src in the
// sources, dist when built (import.meta.url in ESM, __dirname in CJS).
const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));

/** A require that resolves packages the way this package's own imports do. */
export const localRequire = createRequire(join(here, 'local-require.js'));
