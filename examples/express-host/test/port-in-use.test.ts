// The example host on a port something else holds: a clear message and exit code 1.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { startNode } from '../../../test/reliability/support/processes.js';

const SERVER = fileURLToPath(new URL('../src/server.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vigil-port-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('says the port is in use and exits 1 when another process listens there', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, resolve));
  try {
    const port = String((taken.address() as AddressInfo).port);
    const host = startNode(SERVER, { PORT: port, VIGIL_STATE_DIR: join(dir, 'state'), VIGIL_DB: join(dir, 'vigil.sqlite'), VIGIL_EXAMPLE_PAGES: 'false' }, dir);
    const { code } = await host.exited();
    expect(code).toBe(1);
    expect(host.output).toContain(`Port ${port} is in use: stop what listens there, or set PORT`);
    expect(host.output).not.toMatch(/TypeError/);
  } finally {
    taken.close();
  }
}, 60_000);
