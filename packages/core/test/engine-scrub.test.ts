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
});
