import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Published {
  topic: string;
  headers: IncomingHttpHeaders;
  /** Title and Tags as ntfy reads them (RFC 2047 encoded words decoded). */
  title: string;
  tags: string[];
  priority: string | undefined;
  message: string;
}

export interface NtfyServer {
  /** `http://127.0.0.1:<port>`, the channel's `server`. */
  url: string;
  published: Published[];
  close(): Promise<void>;
}

/** Decodes `=?UTF-8?B?...?=` as ntfy does; other values pass as they are. */
function decodeHeader(value: string | undefined): string {
  const m = /^=\?utf-8\?b\?([A-Za-z0-9+/=]*)\?=$/i.exec(value ?? '');
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8') : (value ?? '');
}

/**
 * A stand-in for an ntfy server on 127.0.0.1: `POST /{topic}` publishes the body as the message
 * and answers the message as JSON with its id. Topics in `refuse` answer 500; with `token` set,
 * a request without `Authorization: Bearer <token>` answers 403, as a protected topic does.
 */
export async function startNtfyServer(options: { refuse?: string[]; token?: string } = {}): Promise<NtfyServer> {
  const published: Published[] = [];
  let serial = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const topic = decodeURIComponent((req.url ?? '/').slice(1));
      const reply = (status: number, body: object) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method !== 'POST' || !/^[-_A-Za-z0-9]{1,64}$/.test(topic)) return reply(404, { code: 40401, error: 'page not found' });
      if (options.refuse?.includes(topic)) return reply(500, { code: 50001, error: 'internal server error' });
      if (options.token && req.headers.authorization !== `Bearer ${options.token}`) return reply(403, { code: 40301, error: 'forbidden' });
      const message = Buffer.concat(chunks).toString('utf8');
      const tags = decodeHeader(req.headers.tags as string | undefined);
      published.push({
        topic,
        headers: req.headers,
        title: decodeHeader(req.headers.title as string | undefined),
        tags: tags ? tags.split(',') : [],
        priority: req.headers.priority as string | undefined,
        message,
      });
      reply(200, { id: `msg${++serial}`, time: Math.floor(Date.now() / 1000), event: 'message', topic, message });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    published,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
