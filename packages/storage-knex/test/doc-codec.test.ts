import { describe, expect, it } from 'vitest';
import { decodeDoc, encodeDoc } from '../src/compact/doc-codec.js';

/** A TCP run's document as the store keeps it: its name, error and the runner's detail. */
const tcpDoc = {
  name: 'orders-db', errorMessage: null,
  details: {
    ipFamily: 'IPv4', remoteAddress: '10.0.3.17', bytesSent: 6, bytesReceived: 7, responseEnded: 'quiet', firstByte: 0.35, response: '+PONG\r\n',
    assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', property: '', target: 'PONG', actual: '+PONG\r\n', passed: true }],
  },
};

describe('detail documents as stored', () => {
  it('read back exactly, with their common field names one character each', () => {
    const stored = encodeDoc(tcpDoc);
    expect(decodeDoc(stored)).toEqual(tcpDoc);
    expect(Buffer.byteLength(stored)).toBeLessThan(JSON.stringify(tcpDoc).length / 2);
  });

  it('read back exactly whatever text they carry: the field names themselves, control characters, other scripts', () => {
    const tricky = {
      name: '"name":"errorMessage":', errorMessage: 'line\nbreak\ttab \u0001\u001d\u001e\u001f end',
      details: { body: '{"statusCode":200,"truncated":false,"headers":{}} ✓ 日本', response: '\\"response\\":', passed: false, 'content-type': 'x' },
    };
    expect(decodeDoc(encodeDoc(tricky))).toEqual(tricky);
  });

  it('read documents stored as plain JSON before', () => {
    expect(decodeDoc(JSON.stringify(tcpDoc))).toEqual(tcpDoc);
  });
});
