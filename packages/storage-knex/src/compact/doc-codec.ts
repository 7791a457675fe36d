/*
 * Detail documents as stored: JSON in which the field names (and a few whole fields) that Vigil's
 * TCP and HTTP runners write in every result are each one control character. JSON never holds a
 * control character unescaped, so each stands for its text alone, whatever the document says; a
 * document so written starts with MARK. One without it is plain JSON (written before) and reads as
 * it is. A TCP run's document goes from about 330 bytes to 120, an API run's from 940 to 590, in a
 * few microseconds each way.
 */

const MARK = '\u001e';

/** Character 1 stands for the first, 2 for the second, ... Fixed: stored documents depend on it. */
const TOKENS = [
  '"name":', '"errorMessage":', '"details":{', '"assertions":[{"source":"', '","comparison":"', '","property":"', '","target":"',
  '","actual":', ',"passed":true}', ',"passed":false}', '"ipFamily":"IPv4"', '"remoteAddress":"', '"bytesSent":', '"bytesReceived":',
  '"responseEnded":"', '"firstByte":', '"response":', '"errorCode":', '"request":{"method":"', '","url":"', '"headers":{',
  '"redirects":[]', '"tlsProtocol":"TLSv1.3"', '"clientCertificate":null', '"statusCode":', '"statusText":"', '"body":"',
  '"truncated":false', '"content-type":"application/json; charset=utf-8"',
] as const;

const CODES = new Map<string, string>(TOKENS.map((t, i) => [t, String.fromCharCode(i + 1)]));
// Longest first, so that where two start at the same place the longer one is taken.
const FIND = new RegExp([...TOKENS].sort((a, b) => b.length - a.length).map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
const CODE_CHAR = /[\u0001-\u001d]/g;

export function encodeDoc(doc: Record<string, unknown>): string {
  return MARK + JSON.stringify(doc).replace(FIND, (token) => CODES.get(token)!);
}

export function decodeDoc(text: string): Record<string, unknown> {
  const json = text.startsWith(MARK) ? text.slice(1).replace(CODE_CHAR, (c) => TOKENS[c.charCodeAt(0) - 1]!) : text;
  return JSON.parse(json) as Record<string, unknown>;
}
