// The benchmarks' own helpers: what they read off the chart and the API, and how they pace load.
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

import { chartMemoryLimitsMiB, memoryLimitMiB, quantityMiB } from '../src/chart-limits.mjs';
import { nextLink, tally } from '../src/http-client.mjs';
import { makeCertificate, startReceiver } from '../src/receiver.mjs';
import { openLoop, percentile, waitUntil } from '../src/stats.mjs';

describe('chart memory limits', () => {
  it('reads a limit for every service from the chart, its own or serviceDefaults', () => {
    const limits = chartMemoryLimitsMiB();
    expect(limits.serviceDefaults).toBeGreaterThan(0);
    for (const service of ['gateway', 'token', 'project', 'webhook', 'issue', 'delivery', 'console']) {
      expect(memoryLimitMiB(limits, service)).toBeGreaterThan(0);
    }
    expect(memoryLimitMiB({ serviceDefaults: 256, delivery: 384 }, 'delivery')).toBe(384);
    expect(memoryLimitMiB({ serviceDefaults: 256, delivery: 384 }, 'token')).toBe(256);
  });

  it('takes resources.limits.memory of each top-level block, nothing else', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-bench-test-'));
    const file = path.join(dir, 'values.yaml');
    fs.writeFileSync(
      file,
      [
        '# -- comment',
        'alpha:',
        '  limits:',
        '    memory: 1Gi',
        '  resources:',
        '    requests:',
        '      memory: 64Mi',
        '    # -- the limit',
        '    limits:',
        '      cpu: 1',
        '      memory: 512Mi',
        'beta:',
        '  nested:',
        '    resources:',
        '      limits:',
        '        memory: 2Gi',
        '  resources:',
        '    limits:',
        '      memory: "268435456"',
        'gamma:',
        '  resources: {}',
        '',
      ].join('\n'),
    );
    try {
      expect(chartMemoryLimitsMiB(file)).toEqual({ alpha: 512, beta: 256 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('converts Kubernetes quantities to MiB', () => {
    expect(quantityMiB('256Mi')).toBe(256);
    expect(quantityMiB('1.5Gi')).toBe(1536);
    expect(quantityMiB('1024Ki')).toBe(1);
    expect(quantityMiB('134217728')).toBe(128);
    expect(quantityMiB('1G')).toBeCloseTo(953.67, 2);
    expect(quantityMiB('lots')).toBeNaN();
  });
});

describe('paging links', () => {
  it('follows rel="next", resolved against the page it came from', () => {
    const base = 'http://127.0.0.1:8080/api/v1/teams/1/webhooks?limit=2';
    expect(nextLink('</api/v1/teams/1/webhooks?cursor=abc&limit=2>; rel="next"', base)).toBe('http://127.0.0.1:8080/api/v1/teams/1/webhooks?cursor=abc&limit=2');
    expect(nextLink('<https://x.test/a?cursor=1>; rel="prev", <https://x.test/a?cursor=3>; rel=next', base)).toBe('https://x.test/a?cursor=3');
    expect(nextLink('<https://x.test/a?cursor=1>; rel="prev"', base)).toBeUndefined();
    expect(nextLink(undefined, base)).toBeUndefined();
  });
});

describe('figures and pacing', () => {
  it('takes percentiles of a sorted array', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(51);
    expect(percentile(sorted, 99)).toBe(100);
    expect(percentile([], 50)).toBeNaN();
  });

  it('counts by key', () => {
    const counts = {};
    for (const status of [201, 429, 201, 'timeout']) tally(counts, status);
    expect(counts).toEqual({ 201: 2, 429: 1, timeout: 1 });
  });

  it('makes every scheduled call once, in order of its due time, and waits for them all', async () => {
    const calls = [];
    let settled = 0;
    await openLoop(400, 0.05, async (i, intendedAt) => {
      calls.push({ i, intendedAt });
      await new Promise((resolve) => setImmediate(resolve));
      settled += 1;
      if (i === 3) throw new Error('a failed call does not stop the loop');
    });
    expect(calls.map((call) => call.i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(settled).toBe(20);
    for (let i = 1; i < calls.length; i++) expect(calls[i].intendedAt).toBeGreaterThanOrEqual(calls[i - 1].intendedAt);
  });
});

describe('the receiver', () => {
  let certificate;
  let receiver;
  const arrivals = [];

  beforeAll(async () => {
    certificate = makeCertificate();
    receiver = await startReceiver(certificate, { onDelivery: (body, receivedAt, deliveryId, hookPath) => arrivals.push({ body, receivedAt, deliveryId, hookPath }) });
  });

  afterAll(async () => {
    await receiver.close();
    fs.rmSync(certificate.dir, { recursive: true, force: true });
  });

  /** POSTs `body` as delivery `deliveryId` to `/hook-1` of `target` (the receiver by default); resolves to the status. */
  const deliver = (deliveryId, body, target = receiver) =>
    new Promise((resolve, reject) => {
      const request = https.request(target.ipUrl('/hook-1'), { method: 'POST', ca: certificate.cert, headers: { 'x-webhook-delivery': deliveryId } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      });
      request.on('error', reject);
      request.end(JSON.stringify(body));
    });

  it('answers every request and reports each delivery once, with its time of arrival and path', async () => {
    const before = Date.now();
    const created = { id: 'evt_1', created_at: '2026-01-02T03:04:05.123456Z' };
    expect(await deliver('d-1', created)).toBe(204);
    expect(await deliver('d-1', created)).toBe(204);
    expect(await deliver('d-2', { id: 'evt_2', created_at: '2026-01-02T03:04:05.000Z' })).toBe(204);
    await waitUntil(() => receiver.firstReceipt.size === 2, 5_000, 'both deliveries');

    expect(receiver.requests).toBe(3);
    expect(arrivals.map(({ deliveryId, hookPath, body }) => [deliveryId, hookPath, body.id])).toEqual([
      ['d-1', '/hook-1', 'evt_1'],
      ['d-2', '/hook-1', 'evt_2'],
    ]);
    expect(receiver.firstReceipt.get('d-1').createdAt).toBeCloseTo(Date.parse('2026-01-02T03:04:05.123Z') + 0.456, 6);
    expect(arrivals[0].receivedAt).toBeGreaterThanOrEqual(before);
    expect(arrivals[0].receivedAt).toBeLessThanOrEqual(Date.now() + 1);
  });

  it('only counts when it does not report', async () => {
    const counting = await startReceiver(certificate, { reports: false, onDelivery: () => arrivals.push('unexpected') });
    try {
      const before = arrivals.length;
      expect(await deliver('bare-1', { id: 'bare-1', created_at: new Date().toISOString() }, counting)).toBe(204);
      expect(counting.requests).toBe(1);
      // The thread's reports arrive in order: once a later delivery to the reporting receiver is
      // reported, a report of bare-1 would have arrived too.
      expect(await deliver('d-after-bare', { id: 'evt_after_bare', created_at: new Date().toISOString() })).toBe(204);
      await waitUntil(() => receiver.firstReceipt.has('d-after-bare'), 5_000, 'the delivery after the counted one');
      expect(counting.firstReceipt.size).toBe(0);
      expect(arrivals.length).toBe(before + 1);
      expect(arrivals.at(-1).deliveryId).toBe('d-after-bare');
    } finally {
      await counting.close();
    }
  });

  it('keeps the deliveries of receivers that share its thread apart, and closes each on its own', async () => {
    const other = await startReceiver(certificate);
    expect(other.ipUrl('/x')).not.toBe(receiver.ipUrl('/x'));
    expect(await deliver('d-other', { id: 'evt_other', created_at: new Date().toISOString() }, other)).toBe(204);
    await waitUntil(() => other.firstReceipt.size === 1, 5_000, "the other receiver's delivery");
    expect(receiver.firstReceipt.has('d-other')).toBe(false);
    await Promise.all([other.close(), other.close()]);
    // The first receiver still answers.
    expect(await deliver('d-3', { id: 'evt_3', created_at: new Date().toISOString() })).toBe(204);
    await waitUntil(() => receiver.firstReceipt.has('d-3'), 5_000, 'a delivery after the other closed');
  });
});
