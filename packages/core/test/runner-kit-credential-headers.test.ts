import { describe, expect, it } from 'vitest';
import { credentialSecrets, isCredentialHeader, scrubSecrets, SCRUBBED } from '../src/index.js';

describe('credentialSecrets', () => {
  it('names Authorization, Proxy-Authorization, Cookie, Set-Cookie and any name with token, key or secret, in any case', () => {
    for (const name of ['Authorization', 'proxy-authorization', 'COOKIE', 'Set-Cookie ', 'X-Api-Key', 'x-auth-token', 'Client-Secret']) {
      expect(isCredentialHeader(name), name).toBe(true);
    }
    for (const name of ['Accept', 'Authorization-Hint', 'Keep-Alive', 'X-Trace']) expect(isCredentialHeader(name), name).toBe(false);
    expect(credentialSecrets('X-Api-Key', 'abc-123456')).toEqual(['abc-123456']);
    expect(credentialSecrets('X-Trace', 'abc-123456')).toEqual([]);
  });

  it('gives the whole value and the credential after its scheme', () => {
    expect(credentialSecrets('Authorization', 'Bearer eyJ.tok.en')).toEqual(['Bearer eyJ.tok.en', 'eyJ.tok.en']);
    expect(credentialSecrets('Proxy-Authorization', '  Token  t0k3n-v4lue ')).toEqual(['Token  t0k3n-v4lue', 't0k3n-v4lue']);
    expect(credentialSecrets('authorization', 'raw-token-without-scheme')).toEqual(['raw-token-without-scheme']);
  });

  it('opens a Basic credential to its user:password and the password', () => {
    const encoded = Buffer.from('svc:s3cret-pw').toString('base64');
    expect(credentialSecrets('Authorization', `Basic ${encoded}`)).toEqual([`Basic ${encoded}`, encoded, 'svc:s3cret-pw', 's3cret-pw']);
    // Not base64 of text with a colon: only what was written.
    expect(credentialSecrets('Authorization', 'Basic not*base64')).toEqual(['Basic not*base64', 'not*base64']);
    expect(credentialSecrets('Authorization', `Basic ${Buffer.from('no colon').toString('base64')}`)).toHaveLength(2);
  });

  it('gives each cookie as name=value, and its value alone only when it is long enough to be a token', () => {
    expect(credentialSecrets('Cookie', 'session=abcdef0123456789; theme=dark; a=b')).toEqual([
      'session=abcdef0123456789; theme=dark; a=b', 'session=abcdef0123456789', 'abcdef0123456789', 'theme=dark', 'a=b',
    ]);
    // A Set-Cookie's attributes are not the cookie.
    expect(credentialSecrets('Set-Cookie', 'sid="0123456789abcdef"; Path=/; HttpOnly')).toEqual([
      'sid="0123456789abcdef"; Path=/; HttpOnly', 'sid="0123456789abcdef"', '0123456789abcdef',
    ]);
  });

  it('leaves out what scrubSecrets would not mask, so a short value shreds no text', () => {
    expect(credentialSecrets('Authorization', 'Bearer ab')).toEqual(['Bearer ab']);
    expect(credentialSecrets('Cookie', 'x=1')).toEqual(['x=1']);
    expect(credentialSecrets('Authorization', '')).toEqual([]);
    const text = 'the list had 2 items: ab, x=1 and more';
    expect(scrubSecrets(text, credentialSecrets('Cookie', 'ab'))).toBe(text);
    expect(scrubSecrets('authorization: Bearer eyJ.tok.en', credentialSecrets('Authorization', 'Bearer eyJ.tok.en'))).toBe(`authorization: ${SCRUBBED}`);
  });
});
