import type { TcpAssertion } from '@vigil/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProperty } from '../src/assertions.js';
import { tcpRunner } from '../src/index.js';
import { answer, assertion, startServer, tcpJob, type TestServer } from './support.js';

const STATUS = '{"status":"ok","version":"v2.13.1","count":42,"items":[{"id":7,"tags":[]}],"meta":{},"a b":"spaced"}';
const BANNER = '220 mail.example.com ESMTP ready\r\n';

describe('assertions on a real response', () => {
  let json: TestServer;
  let banner: TestServer;
  let empty: TestServer;
  const runner = tcpRunner({ regexTimeoutMs: 50 });
  beforeAll(async () => {
    json = await startServer('127.0.0.1', answer(STATUS, { greet: true }));
    banner = await startServer('127.0.0.1', answer(BANNER, { greet: true }));
    empty = await startServer('127.0.0.1', (socket) => socket.end());
  });
  afterAll(async () => {
    await json.close();
    await banner.close();
    await empty.close();
  });

  const check = async (server: TestServer, a: TcpAssertion) => {
    const result = await runner.run(tcpJob({ request: { port: server.port, assertions: [a] } }), new AbortController().signal);
    expect(result.hasErrors).toBe(false);
    return result;
  };

  type Case = [label: string, server: () => TestServer, assertion: TcpAssertion, passes: boolean];
  const cases: Case[] = [
    ['EQUALS the whole banner', () => banner, assertion('RESPONSE_DATA', 'EQUALS', BANNER), true],
    ['EQUALS is exact (no trimming)', () => banner, assertion('RESPONSE_DATA', 'EQUALS', BANNER.trim()), false],
    ['NOT_EQUALS another text', () => banner, assertion('RESPONSE_DATA', 'NOT_EQUALS', 'nope'), true],
    ['NOT_EQUALS the same text', () => banner, assertion('RESPONSE_DATA', 'NOT_EQUALS', BANNER), false],
    ['IS_EMPTY on an empty response', () => empty, assertion('RESPONSE_DATA', 'IS_EMPTY'), true],
    ['IS_EMPTY on a banner', () => banner, assertion('RESPONSE_DATA', 'IS_EMPTY'), false],
    ['NOT_EMPTY on a banner', () => banner, assertion('RESPONSE_DATA', 'NOT_EMPTY'), true],
    ['NOT_EMPTY on an empty response', () => empty, assertion('RESPONSE_DATA', 'NOT_EMPTY'), false],
    ['CONTAINS a word of it', () => banner, assertion('RESPONSE_DATA', 'CONTAINS', 'ESMTP'), true],
    ['CONTAINS is case-sensitive', () => banner, assertion('RESPONSE_DATA', 'CONTAINS', 'esmtp'), false],
    ['NOT_CONTAINS a word it lacks', () => banner, assertion('RESPONSE_DATA', 'NOT_CONTAINS', '554'), true],
    ['NOT_CONTAINS a word it has', () => banner, assertion('RESPONSE_DATA', 'NOT_CONTAINS', '220'), false],
    ['LESS_THAN on a number read by regex', () => banner, assertion('RESPONSE_DATA', 'LESS_THAN', '300', { regex: '^(\\d{3})' }), true],
    ['LESS_THAN fails when it is not less', () => banner, assertion('RESPONSE_DATA', 'LESS_THAN', '220', { regex: '^(\\d{3})' }), false],
    ['GREATER_THAN on a number read by regex', () => banner, assertion('RESPONSE_DATA', 'GREATER_THAN', '199', { regex: '^(\\d{3})' }), true],
    ['GREATER_THAN on text that is no number', () => banner, assertion('RESPONSE_DATA', 'GREATER_THAN', '1'), false],
    ['regex: the first capture group', () => banner, assertion('RESPONSE_DATA', 'EQUALS', 'mail.example.com', { regex: '^220 (\\S+)' }), true],
    ['regex: the whole match when it has no group', () => banner, assertion('RESPONSE_DATA', 'EQUALS', 'ESMTP ready', { regex: 'ESMTP \\w+' }), true],
    ['regex: no match is empty', () => banner, assertion('RESPONSE_DATA', 'IS_EMPTY', '', { regex: '^554' }), true],
    ['property: a string', () => json, assertion('RESPONSE_DATA', 'EQUALS', 'ok', { property: 'status' }), true],
    ['property: $. path into an array', () => json, assertion('RESPONSE_DATA', 'EQUALS', '7', { property: '$.items[0].id' }), true],
    ['property: a number compared as a number', () => json, assertion('RESPONSE_DATA', 'GREATER_THAN', '41.5', { property: 'count' }), true],
    ['property: an empty array IS_EMPTY', () => json, assertion('RESPONSE_DATA', 'IS_EMPTY', '', { property: 'items[0].tags' }), true],
    ['property: an empty object IS_EMPTY', () => json, assertion('RESPONSE_DATA', 'IS_EMPTY', '', { property: 'meta' }), true],
    ['property: a bracketed key', () => json, assertion('RESPONSE_DATA', 'EQUALS', 'spaced', { property: '$["a b"]' }), true],
    ['property: a missing one is empty', () => json, assertion('RESPONSE_DATA', 'IS_EMPTY', '', { property: 'nothing.here' }), true],
    ['property and regex together', () => json, assertion('RESPONSE_DATA', 'EQUALS', '2', { property: 'version', regex: 'v(\\d+)\\.' }), true],
    ['property on a response that is not JSON', () => banner, assertion('RESPONSE_DATA', 'EQUALS', 'x', { property: 'status' }), false],
    ['RESPONSE_TIME LESS_THAN a generous bound', () => banner, assertion('RESPONSE_TIME', 'LESS_THAN', '10000'), true],
    ['RESPONSE_TIME GREATER_THAN a generous bound', () => banner, assertion('RESPONSE_TIME', 'GREATER_THAN', '10000'), false],
    ['RESPONSE_TIME NOT_EQUALS -1', () => banner, assertion('RESPONSE_TIME', 'NOT_EQUALS', '-1'), true],
    ['RESPONSE_TIME EQUALS -1', () => banner, assertion('RESPONSE_TIME', 'EQUALS', '-1'), false],
  ];

  it.each(cases)('%s', async (_label, server, a, passes) => {
    const result = await check(server(), a);
    expect(result.assertions).toHaveLength(1);
    expect(result.assertions![0]!.passed).toBe(passes);
    expect(result.hasFailures).toBe(!passes);
    expect(result.failureKind).toBe(passes ? null : 'ASSERTION');
    if (!passes) expect(result.errorMessage).toMatch(/^Assertion RESPONSE_(DATA|TIME) /);
  });

  it('a failure names the assertion and the actual value', async () => {
    const result = await check(banner, assertion('RESPONSE_DATA', 'CONTAINS', '554'));
    expect(result.errorMessage).toBe(`Assertion RESPONSE_DATA CONTAINS "554" failed: the response was ${JSON.stringify(BANNER)}`);
    const extracted = await check(json, assertion('RESPONSE_DATA', 'EQUALS', '3', { property: 'version', regex: 'v(\\d+)' }));
    expect(extracted.errorMessage).toBe('Assertion RESPONSE_DATA property "version" regex /v(\\d+)/ EQUALS "3" failed: the value was "2"');
    expect(extracted.assertions).toEqual([{ source: 'RESPONSE_DATA', comparison: 'EQUALS', property: 'version', target: '3', actual: '2', passed: false }]);
    const notJson = await check(banner, assertion('RESPONSE_DATA', 'EQUALS', 'ok', { property: 'status' }));
    expect(notJson.errorMessage).toBe('Assertion RESPONSE_DATA property "status" EQUALS "ok" failed: the response is not JSON, so property "status" cannot be read');
    const slow = await check(banner, assertion('RESPONSE_TIME', 'GREATER_THAN', '10000'));
    expect(slow.errorMessage).toBe(`Assertion RESPONSE_TIME GREATER_THAN 10000 failed: the response took ${slow.responseTime} ms`);
    expect(slow.assertions?.[0]?.actual).toBe(slow.responseTime);
  });

  it('every failed assertion is listed, and the passing ones are recorded too', async () => {
    const result = await runner.run(tcpJob({
      request: {
        port: banner.port,
        assertions: [assertion('RESPONSE_DATA', 'CONTAINS', '220'), assertion('RESPONSE_DATA', 'CONTAINS', 'x1'), assertion('RESPONSE_DATA', 'CONTAINS', 'x2')],
      },
    }), new AbortController().signal);
    expect(result.assertions?.map((a) => a.passed)).toEqual([true, false, false]);
    expect(result.errorMessage?.split('; ')).toHaveLength(2);
  });

  it('a comparison that does not fit RESPONSE_TIME fails with a reason', async () => {
    const result = await check(banner, assertion('RESPONSE_TIME', 'CONTAINS', '1'));
    expect(result.errorMessage).toContain('CONTAINS does not apply to RESPONSE_TIME');
  });

  it('a regex that backtracks without end costs one failed assertion, not the event loop', async () => {
    const server = await startServer('127.0.0.1', answer(`${'a'.repeat(40)}!`, { greet: true }));
    try {
      const result = await check(server, assertion('RESPONSE_DATA', 'NOT_EMPTY', '', { regex: '^(a+)+$' }));
      expect(result.failureKind).toBe('ASSERTION');
      expect(result.errorMessage).toContain('ran longer than 50 ms on the response; simplify it');
    } finally {
      await server.close();
    }
  });
});

describe('assertions with placeholders among plain ones', () => {
  it('fills only the targets that hold {{KEY}}, and reports every assertion in its order', async () => {
    const server = await startServer('127.0.0.1', answer(BANNER, { greet: true }));
    try {
      const list = [
        assertion('RESPONSE_DATA', 'CONTAINS', '220'),
        assertion('RESPONSE_DATA', 'CONTAINS', '{{HOST}}'),
        assertion('RESPONSE_DATA', 'NOT_CONTAINS', 'busy'),
        assertion('RESPONSE_DATA', 'CONTAINS', '{{MISSING}}'),
      ];
      const job = tcpJob({ request: { port: server.port, assertions: list }, job: { environment: { HOST: 'mail.example.com' } } });
      const result = await tcpRunner().run(job, new AbortController().signal);
      expect(result.assertions?.map((a) => [a.target, a.passed])).toEqual([
        ['220', true], ['mail.example.com', true], ['busy', true], ['{{MISSING}}', false],
      ]);
      expect(result.errorMessage).toContain('{{MISSING}}');
      // The check itself is left as it was.
      expect(list[1]!.target).toBe('{{HOST}}');
    } finally {
      await server.close();
    }
  });
});

describe('readProperty', () => {
  const doc = { a: { b: [{ c: 1 }, { 'd e': 2 }] }, 'x.y': 3 };
  it.each([
    ['a.b[0].c', 1],
    ['$.a.b[1]["d e"]', 2],
    ["$['x.y']", 3],
    ['$', doc],
    ['a.b[5]', undefined],
    ['a..b', undefined],
    ['a.b.length', 2],
  ] as const)('%s', (path, expected) => {
    expect(readProperty(doc, path)).toEqual(expected);
  });
});
