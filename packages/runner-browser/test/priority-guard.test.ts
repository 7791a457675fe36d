import { afterAll, describe, expect, it } from 'vitest';
import { browserRunner } from '../src/index.js';
import { browserJob, CHROMIUM_BUILDS } from './support.js';

// os.setPriority reaches any process of the same user, and Node's permission model does not
// cover it: a script could renice its host (process.ppid). The script's process takes it away.
describe.each(CHROMIUM_BUILDS)('a browser check\'s script and process priorities on %s', (executablePath) => {
  const runner = browserRunner({ executablePath, poolSize: 1, artifacts: undefined });
  afterAll(() => runner.close());

  it('cannot read or change any process\'s priority, its host\'s included', async () => {
    const result = await runner.run(browserJob({
      script: `const os = require('node:os');
expect(() => os.setPriority(process.ppid, 19)).toThrow("A check script may not read or change a process's priority (os.setPriority() was called)");
expect(() => os.setPriority(19)).toThrow('os.setPriority() was called');
expect(() => process.getBuiltinModule('node:os').getPriority(process.ppid)).toThrow('os.getPriority() was called');`,
    }), new AbortController().signal);
    expect(result.errorMessage).toBeNull();
  });
});
