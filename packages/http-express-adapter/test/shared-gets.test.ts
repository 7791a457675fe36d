// Identical reads that arrive in one turn of the event loop share one run of their route: the
// sharing itself (runs, signals, clients that hang up), then over real HTTP on 127.0.0.1, with
// requests pipelined on one connection so that they arrive together.
import { AsyncLocalStorage } from 'node:async_hooks';
import net from 'node:net';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import express from 'express';
import { HangUp } from '../src/hang-up.js';
import { vigilRouter } from '../src/index.js';
import { sharedGets } from '../src/shared-gets.js';
import { call, closeAfterEach, listeningPort, start } from './support/guard-calls.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('sharedGets', () => {
  it('runs identical reads asked in one turn once, and different ones each', async () => {
    const share = sharedGets();
    const runs: string[] = [];
    const run = (name: string) => async () => {
      runs.push(name);
      return { name };
    };
    const answers = await Promise.all([
      share('a', new HangUp(), run('a1')),
      share('a', new HangUp(), run('a2')),
      share('b', new HangUp(), run('b1')),
      share('a', new HangUp(), run('a3')),
    ]);
    expect(runs).toEqual(['a1', 'b1']);
    expect(answers.map((a) => a.result)).toEqual([{ name: 'a1' }, { name: 'a1' }, { name: 'b1' }, { name: 'a1' }]);
    // The three that shared get one answer (its JSON text is then written once); the lone one its own.
    expect(answers[0]).toBe(answers[1]);
    expect(answers[0]).toBe(answers[3]);
    expect(answers.map((a) => a.shared)).toEqual([true, true, false, true]);
    // A later turn runs again: nothing is kept.
    await share('a', new HangUp(), run('a4'));
    expect(runs).toEqual(['a1', 'b1', 'a4']);
  });

  it('gives a lone read its own request signal, and a shared one a signal that aborts when the last of its requests has gone', async () => {
    const share = sharedGets();
    const lone = new HangUp();
    let loneSignal: AbortSignal | undefined;
    await share('x', lone, async (signal) => (loneSignal = signal));
    expect(loneSignal).toBe(lone.signal);

    const [first, second] = [new HangUp(), new HangUp()];
    let signal!: AbortSignal;
    let finish!: (value: string) => void;
    const answers = [first, second].map((h) => share('y', h, (s) => {
      signal = s;
      return new Promise((resolve) => (finish = resolve));
    }));
    await nextTurn();
    first.hungUp();
    expect(signal.aborted).toBe(false);
    second.hungUp();
    expect(signal.aborted).toBe(true);
    finish('late');
    // Each ended when its client went, with nothing to send.
    expect((await Promise.all(answers)).map((a) => a.result)).toEqual([undefined, undefined]);
  });

  it('does not run for a request whose client hung up before the turn ended', async () => {
    const share = sharedGets();
    let runs = 0;
    const gone = new HangUp();
    const answer = share('z', gone, async () => ++runs);
    gone.hungUp();
    expect(await answer).toEqual({ result: undefined, shared: false });
    expect(runs).toBe(0);
  });

  it('ends a request whose client goes during a shared run at once, the others when it ends', async () => {
    const share = sharedGets();
    const [leaving, staying] = [new HangUp(), new HangUp()];
    let finish!: (value: string) => void;
    const answers = [leaving, staying].map((h) => share('w', h, () => new Promise((resolve) => (finish = resolve))));
    await nextTurn();
    leaving.hungUp();
    expect(await answers[0]).toEqual({ result: undefined, shared: false });
    finish('done');
    expect(await answers[1]).toEqual({ result: 'done', shared: true });
  });

  it('runs a lone read in the context of its request, and a shared one in none of theirs', async () => {
    const requestId = new AsyncLocalStorage<string>();
    const share = sharedGets();
    const seen: (string | undefined)[] = [];
    const run = async () => {
      seen.push(requestId.getStore());
      return 'ok';
    };
    await requestId.run('req-1', () => share('lone', new HangUp(), run));
    await Promise.all(['req-2', 'req-3'].map((id) => requestId.run(id, () => share('pair', new HangUp(), run))));
    expect(seen).toEqual(['req-1', undefined]);
  });

  it('turns a run that throws at once into a failed answer, and still runs the others of its turn', async () => {
    const share = sharedGets();
    const failure = new Error('no such route state');
    const throwing = share('t', new HangUp(), () => {
      throw failure;
    });
    const fine = share('u', new HangUp(), async () => 'fine');
    await expect(throwing).rejects.toBe(failure);
    expect((await fine).result).toBe('fine');
  });

  it('hands a failed run to every request that shared it', async () => {
    const share = sharedGets();
    const failure = new Error('store down');
    const answers = [1, 2].map(() => share('f', new HangUp(), async () => {
      throw failure;
    }));
    for (const answer of answers) await expect(answer).rejects.toBe(failure);
  });
});

type Creds = { key: string; accountId: string };

/**
 * Sends `paths` as GETs pipelined on one connection (one write), each with `creds` or with the
 * credentials paired with it, and reads the answers, in order.
 */
async function pipelined(port: number, paths: (string | [string, Creds])[], creds?: Creds) {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(paths.map((entry) => {
    const [path, who] = typeof entry === 'string' ? [entry, creds!] : entry;
    return `GET /api${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${who.key}\r\nx-service-account: ${who.accountId}\r\n\r\n`;
  }).join(''));
  let text = '';
  socket.setEncoding('utf8');
  const answers: { status: number; etag: string; body: string }[] = [];
  for await (const chunk of socket) {
    text += chunk as string;
    // Each answer has a Content-Length: take every complete one.
    for (;;) {
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) break;
      const head = text.slice(0, end);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (Buffer.byteLength(text.slice(end + 4)) < length) break;
      const body = Buffer.from(text.slice(end + 4)).subarray(0, length).toString();
      answers.push({ status: Number(head.split(' ')[1]), etag: /etag: (.+)/i.exec(head)?.[1] ?? '', body });
      text = Buffer.from(text.slice(end + 4)).subarray(length).toString();
    }
    if (answers.length === paths.length) break;
  }
  socket.destroy();
  return answers;
}

describe('identical GETs arriving together', () => {
  closeAfterEach();

  it('share one read of the store, and each gets the body and ETag res.json gives', async () => {
    const h = await start({});
    const port = listeningPort();
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } });
    const other = await h.vigil.checks.create(h.a.accountId, 'TCP', { name: 'cache', request: { hostname: '127.0.0.1', port: 6379 } });
    const get = h.vigil.checks.get.bind(h.vigil.checks);
    const reads: string[] = [];
    h.vigil.checks.get = async (accountId, id) => {
      reads.push(String(id));
      return get(accountId, id);
    };
    const paths = [check.id, check.id, other.id, check.id].map((id) => `/v1/checks/${id}`);
    // The key is known (authenticated and touched) before: the reads then reach their route in one turn.
    expect((await call('/v1/checks', h.a)).status).toBe(200);
    const answers = await pipelined(port, paths, h.a);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(reads.sort()).toEqual([check.id, other.id].sort());
    // A read alone is sent by res.json: the shared ones get its body and ETag.
    const alone = await call(paths[0]!, h.a);
    for (const i of [0, 1, 3]) {
      expect(JSON.parse(answers[i]!.body)).toEqual(alone.body);
      expect(answers[i]!.body).toBe(JSON.stringify(alone.body));
      expect(answers[i]!.etag).toBe(alone.headers.etag);
    }
    expect(JSON.parse(answers[2]!.body)).toMatchObject({ id: other.id, name: 'cache' });

    // A write completed before the reads were sent is what they see.
    await h.a.put(`/api/v1/checks/tcp/${check.id}`, { name: 'orders-db-primary' }).expect(200);
    const after = await pipelined(port, paths.slice(0, 2), h.a);
    expect(after.map((a) => JSON.parse(a.body).name)).toEqual(['orders-db-primary', 'orders-db-primary']);

    // Another account's read of the same path, arriving with them, is its own.
    expect((await call('/v1/checks', h.b)).status).toBe(200);
    reads.length = 0;
    const mixed = await pipelined(port, [[paths[0]!, h.a], [paths[0]!, h.b], [paths[0]!, h.a]]);
    expect(mixed.map((a) => a.status)).toEqual([200, 404, 200]);
    expect(reads).toEqual([check.id, check.id]);
  });

  it('are sent through res.json where the host changed it', async () => {
    const h = await start({});
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } });
    const app = express();
    app.use((_req, res, next) => {
      const json = res.json.bind(res);
      res.json = (body: unknown) => json({ data: body });
      next();
    });
    app.use('/api', vigilRouter(h.vigil, {}));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const port = (server.address() as net.AddressInfo).port;
      await pipelined(port, ['/v1/checks'], h.a);
      const answers = await pipelined(port, [`/v1/checks/${check.id}`, `/v1/checks/${check.id}`], h.a);
      expect(answers.map((a) => JSON.parse(a.body).data?.name)).toEqual(['orders-db', 'orders-db']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
