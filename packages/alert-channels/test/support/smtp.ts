import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface Mail {
  from: string;
  to: string[];
  parsed: ParsedMail;
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives, parsed. */
export class SmtpSink {
  readonly mails: Mail[] = [];
  /** Recipients the server refuses for good (550). */
  readonly refuse = new Set<string>();
  /** Recipients the server asks to try again later (451). */
  readonly defer = new Set<string>();
  logins: { user: string; pass: string }[] = [];
  port = 0;
  private constructor(private readonly server: SMTPServer) {}

  static async start(options: { auth?: { user: string; pass: string } } = {}): Promise<SmtpSink> {
    let sink!: SmtpSink;
    const server = new SMTPServer({
      secure: false,
      disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
      authOptional: !options.auth,
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, callback) {
        sink.logins.push({ user: auth.username ?? '', pass: auth.password ?? '' });
        if (auth.username === options.auth?.user && auth.password === options.auth?.pass) callback(null, { user: auth.username });
        else callback(new Error('Invalid username or password'));
      },
      onRcptTo(address, _session, callback) {
        const code = sink.refuse.has(address.address) ? 550 : sink.defer.has(address.address) ? 451 : 0;
        if (code) {
          const err = new Error(code === 550 ? 'Mailbox unavailable' : 'Try again later') as Error & { responseCode: number };
          err.responseCode = code;
          callback(err);
        } else callback();
      },
      onData(stream, session, callback) {
        simpleParser(stream).then((parsed) => {
          sink.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            parsed,
          });
          callback();
        }, callback);
      },
    });
    sink = new SmtpSink(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    sink.port = (server.server.address() as AddressInfo).port;
    return sink;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
