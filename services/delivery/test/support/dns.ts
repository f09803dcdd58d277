import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

/**
 * A tiny authoritative DNS server on 127.0.0.1 for the DNS tests: A queries for the names it knows
 * get the address currently set (TTL 0 unless set otherwise), AAAA gets no records, anything else
 * NXDOMAIN.
 * The services reach it through WEBHOOK_DNS_SERVERS.
 */
export class DnsResponder {
  private readonly records = new Map<string, string>();
  private readonly ttls = new Map<string, number>();
  queries = 0;

  private constructor(private readonly socket: Socket) {}

  static async start(): Promise<DnsResponder> {
    const socket = createSocket('udp4');
    const responder = new DnsResponder(socket);
    socket.on('message', (message, remote) => {
      const answer = responder.answer(message);
      if (answer) socket.send(answer, remote.port, remote.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    return responder;
  }

  /** `127.0.0.1:<port>`, a WEBHOOK_DNS_SERVERS entry. */
  get server(): string {
    return `127.0.0.1:${(this.socket.address() as AddressInfo).port}`;
  }

  /** Answers `name` with `ipv4` from now on, with a TTL of `ttlSeconds` (0: not to be cached). */
  set(name: string, ipv4: string, ttlSeconds = 0): void {
    this.records.set(name.toLowerCase(), ipv4);
    this.ttls.set(name.toLowerCase(), ttlSeconds);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private answer(query: Buffer): Buffer | undefined {
    if (query.length < 12) return undefined;
    this.queries += 1;
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length) {
      const length = query[offset] as number;
      if (length === 0) break;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5;
    if (questionEnd > query.length) return undefined;
    const type = query.readUInt16BE(offset + 1);
    const address = this.records.get(labels.join('.').toLowerCase());
    const ttl = this.ttls.get(labels.join('.').toLowerCase()) ?? 0;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    const withAnswer = address !== undefined && type === 1;
    // QR, opcode 0, AA, RD copied; RCODE 3 (NXDOMAIN) for unknown names.
    header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | (address === undefined ? 3 : 0), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(withAnswer ? 1 : 0, 6);
    const question = query.subarray(12, questionEnd);
    if (!withAnswer) return Buffer.concat([header, question]);
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // pointer to the name in the question
    record.writeUInt16BE(1, 2); // A
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(ttl, 6);
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, index) => record.writeUInt8(Number(octet), 12 + index));
    return Buffer.concat([header, question, record]);
  }
}
