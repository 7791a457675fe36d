import { afterEach, describe, expect, it } from 'vitest';
import { sampleAlertMessage, transportSuite } from '@vigil/core/testing';
import { emailTransport } from '@vigil/alert-channels';
import { channelOf } from './support/channels.js';
import { SmtpSink } from './support/smtp.js';

const sinks: SmtpSink[] = [];
afterEach(async () => {
  for (const s of sinks.splice(0)) await s.close();
});
async function sink(options?: Parameters<typeof SmtpSink.start>[0]) {
  const s = await SmtpSink.start(options);
  sinks.push(s);
  return s;
}
const signal = () => new AbortController().signal;

describe('EMAIL transport', () => {
  transportSuite(it, async () => {
    const s = await SmtpSink.start();
    s.refuse.add('nobody@example.com');
    return {
      transport: emailTransport({ smtp: { host: '127.0.0.1', port: s.port }, from: 'alerts@vigil.test' }),
      channel: channelOf('EMAIL', { address: 'ops@example.com' }),
      failingChannel: channelOf('EMAIL', { address: 'nobody@example.com' }),
      invalidConfig: { address: 'not an address' },
      received: async () => s.mails.map((m) => ({ to: m.to, subject: m.parsed.subject, text: m.parsed.text })),
      cleanup: () => s.close(),
    };
  }, { prefix: 'EMAIL' });

  it('sends a mail that says what failed, where, since when and the error, as text and HTML', async () => {
    const s = await sink();
    const transport = emailTransport({
      smtp: { host: '127.0.0.1', port: s.port }, from: '"Vigil alerts" <alerts@vigil.test>',
      checkUrl: (a) => `https://status.example.com/checks/${a.check.id}`,
    });
    const alert = sampleAlertMessage({ result: { ...sampleAlertMessage().result!, errorMessage: 'expected <200> & got 503' } });
    const receipt = await transport.send(alert, channelOf('EMAIL', { address: 'ops@example.com' }), signal());
    expect(receipt.providerId).toMatch(/^<.+>$/);
    const [mail] = s.mails;
    expect(mail!.from).toBe('alerts@vigil.test');
    expect(mail!.to).toEqual(['ops@example.com']);
    expect(mail!.parsed.subject).toBe('[Vigil] "orders-db" is failing in eu-west-1');
    expect(mail!.parsed.headers.get('x-vigil-alert-id')).toBe(alert.id);
    const text = mail!.parsed.text!;
    expect(text).toContain('Check: orders-db');
    expect(text).toContain('Location: eu-west-1');
    expect(text).toContain('Since: 2026-05-01T11:58:00.000Z');
    expect(text).toContain('Error: expected <200> & got 503');
    expect(text).toContain(`https://status.example.com/checks/${alert.check.id}`);
    const html = String(mail!.parsed.html);
    expect(html).toContain('expected &lt;200&gt; &amp; got 503');
    expect(html).toContain(`href="https://status.example.com/checks/${alert.check.id}"`);
    expect(html).not.toContain('<200>');
  });

  it('a recovery says when it recovered and carries no error', async () => {
    const s = await sink();
    const transport = emailTransport({ smtp: { host: '127.0.0.1', port: s.port }, from: 'alerts@vigil.test' });
    await transport.send(sampleAlertMessage({ alertType: 'ALERT_RECOVERY', title: '"orders-db" has recovered', failingSince: null }),
      channelOf('EMAIL', { address: 'ops@example.com' }), signal());
    const text = s.mails[0]!.parsed.text!;
    expect(s.mails[0]!.parsed.subject).toBe('[Vigil] "orders-db" has recovered');
    expect(text).toContain('Recovered at: 2026-05-01T12:00:00.000Z');
    expect(text).not.toContain('Error:');
  });

  it('logs in with the configured credentials; wrong ones reject so the alert is retried', async () => {
    const s = await sink({ auth: { user: 'vigil', pass: 'right' } });
    const channel = channelOf('EMAIL', { address: 'ops@example.com' });
    const good = emailTransport({ smtp: { host: '127.0.0.1', port: s.port, auth: { user: 'vigil', pass: 'right' } }, from: 'alerts@vigil.test' });
    await good.send(sampleAlertMessage(), channel, signal());
    const bad = emailTransport({ smtp: { host: '127.0.0.1', port: s.port, auth: { user: 'vigil', pass: 'wrong' } }, from: 'alerts@vigil.test' });
    const err = await bad.send(sampleAlertMessage(), channel, signal()).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/^SMTP 535/);
    expect(s.logins).toEqual([{ user: 'vigil', pass: 'right' }, { user: 'vigil', pass: 'wrong' }]);
    expect(s.mails).toHaveLength(1);
  });

  it('a refused recipient and an unreachable server reject with the reason', async () => {
    const s = await sink();
    s.refuse.add('gone@example.com');
    const transport = emailTransport({ smtp: { host: '127.0.0.1', port: s.port }, from: 'alerts@vigil.test' });
    const refused = await transport.send(sampleAlertMessage(), channelOf('EMAIL', { address: 'gone@example.com' }), signal()).catch((e: Error) => e);
    expect((refused as Error).message).toMatch(/^SMTP 550/);
    await s.close();
    sinks.splice(sinks.indexOf(s), 1);
    const down = await transport.send(sampleAlertMessage(), channelOf('EMAIL', { address: 'ops@example.com' }), signal()).catch((e: Error) => e);
    expect((down as Error).message).toMatch(/^SMTP ESOCKET: connect ECONNREFUSED/);
  });
});
