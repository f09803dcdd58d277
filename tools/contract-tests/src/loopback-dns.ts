import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

/**
 * A DNS server on 127.0.0.1 that answers every A query with 127.0.0.1 (and AAAA with no record),
 * so that any webhook host name the fuzzer makes up resolves, to this machine, and webhooks can be
 * created and pinged. The services reach it through WEBHOOK_DNS_SERVERS; WEBHOOK_ALLOWED_CIDRS
 * must allow 127.0.0.0/8.
 */
export class LoopbackDns {
  private constructor(private readonly socket: Socket) {}

  static async start(): Promise<LoopbackDns> {
    const socket = createSocket('udp4');
    const dns = new LoopbackDns(socket);
    socket.on('message', (message, remote) => {
      const answer = answerQuery(message);
      if (answer) socket.send(answer, remote.port, remote.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    return dns;
  }

  /** `127.0.0.1:<port>`, a WEBHOOK_DNS_SERVERS entry. */
  get server(): string {
    return `127.0.0.1:${(this.socket.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

/** The answer to one query: the question echoed, and for type A one record of 127.0.0.1 (TTL 0). */
function answerQuery(query: Buffer): Buffer | undefined {
  if (query.length < 12) return undefined;
  let offset = 12;
  while (offset < query.length && query[offset] !== 0) offset += (query[offset] as number) + 1;
  const questionEnd = offset + 5;
  if (questionEnd > query.length) return undefined;
  const isA = query.readUInt16BE(offset + 1) === 1;
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  // A response, authoritative, recursion-desired copied, no error.
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(isA ? 1 : 0, 6);
  const question = query.subarray(12, questionEnd);
  if (!isA) return Buffer.concat([header, question]);
  const record = Buffer.alloc(16);
  record.writeUInt16BE(0xc00c, 0); // the name of the question
  record.writeUInt16BE(1, 2); // A
  record.writeUInt16BE(1, 4); // IN
  record.writeUInt32BE(0, 6); // TTL
  record.writeUInt16BE(4, 10);
  [127, 0, 0, 1].forEach((octet, index) => record.writeUInt8(octet, 12 + index));
  return Buffer.concat([header, question, record]);
}
