import { describe, expect, it } from 'vitest';
import { scrubDeep, scrubSecrets, SCRUBBED } from '../src/index.js';

const SECRET = 'pa55 w0rd/+x';

describe('scrubSecrets', () => {
  it('masks a secret as it is, URL- and form-encoded in either hex case, and JSON-escaped', () => {
    const uri = encodeURIComponent(SECRET);
    const text = [SECRET, uri, uri.toLowerCase(), 'pa55+w0rd%2F%2Bx', JSON.stringify('a"b\\c"').slice(1, -1)].join(' | ');
    expect(scrubSecrets(text, [SECRET, 'a"b\\c"'], true)).toBe([SCRUBBED, SCRUBBED, SCRUBBED, SCRUBBED, SCRUBBED].join(' | '));
  });

  it('masks base64 of a secret, whole or inside a longer encoded value at any byte offset, with the rest of that value', () => {
    expect(scrubSecrets(`token ${Buffer.from(SECRET).toString('base64')}`, [SECRET])).toBe(`token ${SCRUBBED}`);
    for (const user of ['svc', 'svc1', 'svc12']) {
      const header = `Basic ${Buffer.from(`${user}:${SECRET}`).toString('base64')}`;
      expect(scrubSecrets(`{"authorization":"${header}","next":"kept"}`, [SECRET], true))
        .toBe(`{"authorization":"Basic ${SCRUBBED}","next":"kept"}`);
    }
    const jwtish = Buffer.from(JSON.stringify({ sub: 'svc', key: SECRET })).toString('base64url');
    expect(scrubSecrets(`Bearer head.${jwtish}.sig`, [SECRET])).toBe(`Bearer head.${SCRUBBED}.sig`);
  });

  it('masks a base64 form once even where a secret contains characters of a regular expression', () => {
    const odd = 'a.b*c(d)[e]?+$^';
    expect(scrubSecrets(`x ${Buffer.from(`u:${odd}`).toString('base64')} y`, [odd])).toBe(`x ${SCRUBBED} y`);
  });

  it('finds every form of every secret in the text as given, so one mask hides no other form', () => {
    const secret = 'abcd:efgh1234';
    const b64 = Buffer.from(secret).toString('base64').replace(/=+$/, '');
    expect(scrubSecrets(`${b64}${secret} end`, [secret])).toBe(`${SCRUBBED} end`);
    const long = 'correct horse battery staple';
    const header = `Basic ${Buffer.from(`admin:${long}`).toString('base64')}`;
    const short = header.slice(12, 16);
    expect(scrubSecrets(header, [short, long])).toBe(`Basic ${SCRUBBED}`);
  });

  it('masks base64 of a secret that was URL-encoded or JSON-escaped after encoding', () => {
    const secret = '\u00fe\u00ff secret?>>';
    const b64 = Buffer.from(secret).toString('base64');
    expect(b64).toMatch(/[+/=]/);
    expect(scrubSecrets(`a=${encodeURIComponent(b64)}&b=1`, [secret])).toBe(`a=${SCRUBBED}&b=1`);
    expect(scrubSecrets(`{"k":"${b64.replaceAll('/', '\\/')}"}`, [secret], true)).toBe(`{"k":"${SCRUBBED}"}`);
  });

  it('scrubs a long run of base64 characters beside an encoded secret in one pass', () => {
    const text = `${'A'.repeat(400_000)} ${Buffer.from(`svc:${SECRET}`).toString('base64')}`;
    expect(scrubSecrets(text, [SECRET])).toBe(`${'A'.repeat(400_000)} ${SCRUBBED}`);
  });

  it('leaves text without the secret, and secrets under three characters, as they are', () => {
    expect(scrubSecrets('nothing to see here', [SECRET])).toBe('nothing to see here');
    expect(scrubSecrets('ab ab', ['ab'])).toBe('ab ab');
    expect(scrubDeep({ n: 1, list: [`x ${SECRET}`], ok: true }, [SECRET])).toEqual({ n: 1, list: [`x ${SCRUBBED}`], ok: true });
  });

  it('masks a secret in a URL as WHATWG URL writes its path, query, search and userinfo, and the same in lower-case hex', () => {
    const secret = "p@ss word's";
    const path = new URL(`http://h/a/${secret}?q=${secret}`);
    // The path keeps @ and ', the query escapes ' and both the space: neither is encodeURIComponent's.
    expect(path.href).toBe("http://h/a/p@ss%20word's?q=p@ss%20word%27s");
    const search = new URL('http://h/');
    search.search = `q=${secret}`;
    const params = new URL('http://h/');
    params.searchParams.append('q', secret);
    const user = new URL('http://h/');
    user.username = 'ada';
    user.password = secret;
    const texts = [path.href, search.href, params.href, user.href, `GET ${path.href.toLowerCase().replace('http://h', '')} failed`];
    expect(texts.map((t) => scrubSecrets(t, [secret]))).toEqual([
      `http://h/a/${SCRUBBED}?q=${SCRUBBED}`,
      `http://h/?q=${SCRUBBED}`,
      `http://h/?q=${SCRUBBED}`,
      `http://ada:${SCRUBBED}@h/`,
      `GET /a/${SCRUBBED}?q=${SCRUBBED} failed`,
    ]);
    // A secret with characters that end a path or a query stands in the URL cut there; its whole form in a path is still masked.
    expect(scrubSecrets('http://h/x/a%20b/c', ['a b/c'])).toBe(`http://h/x/${SCRUBBED}`);
  });

  it('scrubs a large result of a thousand secrets at once, every form of each found', () => {
    const secrets = Array.from({ length: 1_000 }, (_, i) => `secret-${String(i).padStart(4, '0')}-${'k'.repeat(40)}${i % 10}`);
    const filler = 'lorem ipsum dolor sit amet '.repeat(70);
    const lines = Array.from({ length: 2_000 }, (_, i) => {
      const s = secrets[(i * 37) % secrets.length]!;
      const forms = [s, encodeURIComponent(`${s} `), Buffer.from(`user:${s}`).toString('base64')];
      return `${filler.slice(0, 900)}[${forms[i % 3]}]${filler.slice(0, 1_000)}`;
    });
    const expected = lines.map((_, i) => `${filler.slice(0, 900)}[${SCRUBBED}${i % 3 === 1 ? '%20' : ''}]${filler.slice(0, 1_000)}`);
    expect(scrubDeep({ lines, n: 3 }, secrets)).toEqual({ lines: expected, n: 3 });
    // Each secret's forms are made once and looked for in one pass: this takes well under a second, not minutes.
  }, 10_000);
});
