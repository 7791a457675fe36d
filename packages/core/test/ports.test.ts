import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { container } from 'tsyringe';
import { describe, expect, it, vi } from 'vitest';
import {
  ConflictError, ForbiddenError, InvalidTransitionError, isValidationError, isVigilError, NotFoundError,
  PayloadTooLargeError, RateLimitedError, reasonPhrase, UnauthorizedError, UnavailableError, ValidationError,
} from '../src/errors.js';
import { systemClock } from '../src/defaults/clock.js';
import { randomIdGenerator } from '../src/defaults/id-generator.js';
import { consoleLogger, silentLogger } from '../src/defaults/logger.js';
import { aesGcmSecretBox, parseSecretKey } from '../src/defaults/secret-box.js';
import { createToken, resolve, resolveAll } from '../src/ports/token.js';

describe('errors', () => {
  it('carry the spec\'s error body with the HTTP reason phrase', () => {
    const cases: [Error & { toJSON(): unknown }, number, string][] = [
      [new UnauthorizedError(), 401, 'Unauthorized'],
      [new ForbiddenError(), 403, 'Forbidden'],
      [new NotFoundError('Check not found'), 404, 'Not Found'],
      [new ConflictError('customUrl "x" is already taken'), 409, 'Conflict'],
      [new InvalidTransitionError('final'), 409, 'Conflict'],
      [new PayloadTooLargeError(), 413, 'Payload Too Large'],
      [new RateLimitedError(12), 429, 'Too Many Requests'],
      [new UnavailableError('database unavailable'), 503, 'Service Unavailable'],
    ];
    for (const [err, statusCode, error] of cases) {
      expect(err.toJSON()).toEqual({ statusCode, error, message: err.message });
      expect(isVigilError(err)).toBe(true);
    }
    expect(reasonPhrase(418)).toBe('Error');
    expect(new RateLimitedError(12).retryAfterSeconds).toBe(12);
  });

  it('a ValidationError names every field and its source', () => {
    const err = new ValidationError([
      { path: 'request.port', message: 'must be between 1 and 65535' },
      { path: 'request.port', message: 'must be an integer' },
      { path: 'name', message: 'is required' },
    ], 'payload');
    expect(err.keys).toEqual(['request.port', 'name']);
    expect(err.toJSON()).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: '"request.port" must be between 1 and 65535; "request.port" must be an integer; "name" is required',
      validation: { source: 'payload', keys: ['request.port', 'name'] },
    });
    expect(isValidationError(err)).toBe(true);
    expect(new ValidationError([]).message).toBe('Invalid input');
  });

  it('are recognised by shape when a second copy of the package made them', () => {
    expect(isVigilError({ code: 'NOT_FOUND', statusCode: 404, message: 'x' })).toBe(true);
    expect(isVigilError(new Error('x'))).toBe(false);
    expect(isVigilError(null)).toBe(false);
    expect(isValidationError(new NotFoundError())).toBe(false);
  });
});

describe('SecretBox (AES-256-GCM)', () => {
  const key = randomBytes(32);

  it('seals and opens; the sealed text holds no plaintext and differs every time', () => {
    const box = aesGcmSecretBox(key);
    const a = box.encrypt('hunter2-passphrase');
    const b = box.encrypt('hunter2-passphrase');
    expect(a).not.toBe(b);
    expect(a).not.toContain('hunter2');
    expect(box.isSealed(a)).toBe(true);
    expect(box.isSealed('hunter2')).toBe(false);
    expect(box.decrypt(a)).toBe('hunter2-passphrase');
    expect(box.decrypt(box.encrypt(''))).toBe('');
    expect(box.decrypt(box.encrypt('ünïcødé ✓'))).toBe('ünïcødé ✓');
  });

  it('refuses altered text and another key', () => {
    const box = aesGcmSecretBox(key);
    const sealed = box.encrypt('secret');
    const parts = sealed.split(':');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => box.decrypt(parts.join(':'))).toThrow();
    expect(() => aesGcmSecretBox(randomBytes(32)).decrypt(sealed)).toThrow();
    expect(() => box.decrypt('plain')).toThrow(/Not a sealed secret/);
  });

  it('takes a key as hex, base64 or bytes, and only of 32 bytes', () => {
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(() => parseSecretKey('too-short')).toThrow(/32 bytes/);
    expect(() => parseSecretKey(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('tokens, ids, clock and logger', () => {
  it('a token resolves what was registered on it, once or many times', () => {
    const c = container.createChildContainer();
    const ONE = createToken<{ n: number }>('test.one');
    const MANY = createToken<string>('test.many');
    c.register(ONE, { useValue: { n: 1 } });
    expect(resolve(c, ONE).n).toBe(1);
    expect(resolveAll(c, MANY)).toEqual([]);
    c.register(MANY, { useValue: 'a' });
    c.register(MANY, { useValue: 'b' });
    expect(resolveAll(c, MANY)).toEqual(['a', 'b']);
    expect(createToken('test.one')).toBe(ONE);
  });

  it('ids are UUIDs and tokens are unguessable and URL-safe', () => {
    expect(randomIdGenerator.uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const t = randomIdGenerator.token();
    expect(t).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(randomIdGenerator.token()).not.toBe(t);
  });

  it('the system clock fires a timer that is already due, and a cancelled one never', async () => {
    const fired = await new Promise<boolean>((done) => {
      systemClock.setTimer(new Date(Date.now() - 1), () => done(true));
    });
    expect(fired).toBe(true);
    const fn = vi.fn();
    const cancel = systemClock.setTimer(new Date(Date.now() - 1), fn);
    cancel();
    await new Promise<void>((done) => systemClock.setTimer(new Date(), done));
    expect(fn).not.toHaveBeenCalled();
    expect(Math.abs(systemClock.now().getTime() - Date.now())).toBeLessThan(1000);
  });

  it('the console logger writes one JSON line per entry at its level, with bound fields', () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const log = consoleLogger('info', { app: 'vigil' }).child({ checkId: 'c1' });
      log.debug('hidden');
      log.info('run finished', { ok: true });
      log.warn('slow');
      log.error('failed');
      silentLogger.child({}).error('nothing');
    } finally {
      spy.mockRestore();
    }
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'info', msg: 'run finished', app: 'vigil', checkId: 'c1', ok: true });
    expect(JSON.parse(lines[2]!).level).toBe('error');
  });
});
