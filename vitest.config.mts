import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(`./packages/${p}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the sources; one test imports the built packages on purpose.
    alias: [
      { find: /^@vigil\/core\/testing$/, replacement: src('core/src/testing/index.ts') },
      { find: /^@vigil\/core\/constructs$/, replacement: src('core/src/constructs/index.ts') },
      { find: /^@vigil\/core\/internals$/, replacement: src('core/src/internals.ts') },
      { find: /^@vigil\/core$/, replacement: src('core/src/index.ts') },
      { find: /^@vigil\/storage-knex$/, replacement: src('storage-knex/src/index.ts') },
      { find: /^@vigil\/http-express-adapter$/, replacement: src('http-express-adapter/src/index.ts') },
      { find: /^@vigil\/runner-tcp$/, replacement: src('runner-tcp/src/index.ts') },
      { find: /^@vigil\/runner-http$/, replacement: src('runner-http/src/index.ts') },
      { find: /^@vigil\/runner-dns$/, replacement: src('runner-dns/src/index.ts') },
      { find: /^@vigil\/runner-icmp$/, replacement: src('runner-icmp/src/index.ts') },
      { find: /^@vigil\/runner-playwright$/, replacement: src('runner-playwright/src/index.ts') },
      { find: /^@vigil\/runner-browser$/, replacement: src('runner-browser/src/index.ts') },
      { find: /^@vigil\/alert-channels$/, replacement: src('alert-channels/src/index.ts') },
      { find: /^@vigil\/console$/, replacement: src('console/src/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts'],
      reporter: ['text-summary', 'json-summary'],
      thresholds: {
        'packages/core/src/rules/**': { lines: 90 },
        'packages/core/src/model/**': { lines: 90 },
      },
    },
  },
});
