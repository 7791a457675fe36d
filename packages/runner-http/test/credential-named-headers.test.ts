import { describe, expect, it } from 'vitest';
import { credentialSecrets } from '@vigil/core';
import { httpRunner } from '../src/index.js';
import { apiJob, assertion, localServers } from './support.js';

describe('headers whose name says they carry a credential', () => {
  const serve = localServers();

  it('an X-Api-Key value is masked in the recorded request, and scrubbed from the echoed body as one of the run\'s secrets; X-Trace shows as sent', async () => {
    const key = 'k3y-4f9c2e7a1b6d';
    // The server echoes every header it was sent.
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ headers: req.headers }));
    });
    const result = await httpRunner().run(apiJob({
      request: {
        url: `${server.origin}/echo`,
        headers: [{ key: 'X-Api-Key', value: key }, { key: 'X-Trace', value: 'plain' }],
        assertions: [assertion('STATUS_CODE', 'EQUALS', '200')],
      },
      // As the engine names a run's secrets: what each credential header carries.
      job: { secrets: [...credentialSecrets('X-Api-Key', key), ...credentialSecrets('X-Trace', 'plain')] },
    }), new AbortController().signal);
    expect(server.seen[0]!.headers).toMatchObject({ 'x-api-key': key, 'x-trace': 'plain' });
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, statusCode: 200 });
    expect(JSON.stringify(result)).not.toContain(key);
    expect((result.details as { request: { headers: Record<string, string> } }).request.headers).toMatchObject({ 'X-Api-Key': '********', 'X-Trace': 'plain' });
  });
});
