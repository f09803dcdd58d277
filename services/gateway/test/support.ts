// Helpers shared by the gateway's integration tests.
import net from 'node:net';
import type { Signer } from '@worklane/config';
import { signIdentity, type Identity } from '@worklane/http';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

/** A request straight to a service (not through the gateway), with whatever headers the test forges. */
export async function direct(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<RawReply> {
  const init: RequestInit = { method, headers: { accept: 'application/json', ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(new URL(path, baseUrl), init);
  const text = await response.text();
  const responseHeaders: Record<string, string> = {};
  response.headers.forEach((value, key) => (responseHeaders[key] = value));
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: response.status, headers: responseHeaders, body: parsed, text };
}

/** Identity headers as the gateway would sign them for `method` and `path`. */
export const signed = (key: Signer, method: string, path: string, identity: Identity, now?: number) => signIdentity(key, method, path, identity, now);

/** Resolves once nothing listens on `port` any more (a server that began shutting down), within `timeoutMs`. */
export async function waitUntilRefused(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    if (refused) return;
    if (Date.now() > deadline) throw new Error(`port ${port} still accepts connections after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Polls `check` every 100 ms until it returns true, at most `attempts` times. */
export async function eventually(check: () => Promise<boolean>, attempts = 150): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`condition not met after ${attempts} attempts`);
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]!] = label[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Samples named `name` whose labels include `labels`. */
export function samples(all: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return all.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
}

export interface HeldRequest {
  /** Sends the body and resolves with the response (the connection closes after it). */
  finish(): Promise<{ status: number; body: any }>;
}

/**
 * Starts a request with `Expect: 100-continue` and resolves once the server has answered
 * `100 Continue`: from then on the request is in flight at the server, waiting for its body,
 * which is sent only when the test calls finish(). No timing is involved.
 */
export function holdRequest(port: number, method: string, path: string, headers: Record<string, string>, body: string): Promise<HeldRequest> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let continued = false;
    let answer: ((reply: { status: number; body: any }) => void) | undefined;
    let fail: (error: Error) => void = reject;
    socket.setEncoding('utf8');
    socket.on('error', (error) => fail(error));
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (!continued && received.includes('\r\n\r\n')) {
        if (!received.startsWith('HTTP/1.1 100')) return reject(new Error(`expected 100 Continue, got ${received.split('\r\n')[0]}`));
        continued = true;
        received = received.slice(received.indexOf('\r\n\r\n') + 4);
        resolve({
          finish: () =>
            new Promise((done, failed) => {
              answer = done;
              fail = failed;
              socket.write(body);
            }),
        });
      }
    });
    socket.on('end', () => {
      const [head = '', text = ''] = received.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      if (answer) answer({ status, body: parsed });
      else fail(new Error(`connection closed before the body was sent: ${received}`));
    });
    const lines = [
      `${method} ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Expect: 100-continue',
      'Connection: close',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** Sends `request` as written on a fresh connection and resolves with the status code answered. */
export function rawStatus(port: number, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
  });
}
