// bench:curve's pure parts: the SVG charts, a point's figures, the tables and where cost bends.
import { BENCH_PROCESS, postgresSpan } from '../src/cpu-meter.mjs';
import { FLAT_WITHIN, costBend, deliveryPaths, describeBend, idleCores, markdownTable, parseList, parseMetrics, summarizePoint } from '../src/curve-figures.mjs';
import { inTurn } from '../src/stats.mjs';
import { chartSvg, escapeXml, formatTick, linearTicks, logTicks, niceStep, scaler } from '../src/svg-chart.mjs';

describe('SVG charts', () => {
  it('picks nice steps and linear ticks from zero past the largest value', () => {
    expect(niceStep(10, 5)).toBe(2);
    expect(niceStep(7, 5)).toBe(2);
    expect(niceStep(1.2, 5)).toBe(0.25);
    expect(niceStep(0)).toBe(1);
    expect(linearTicks(0.4, 9.3)).toEqual({ ticks: [0, 2, 4, 6, 8, 10], domain: [0, 10] });
    expect(linearTicks(3, 3)).toEqual({ ticks: [0, 1, 2, 3], domain: [0, 3] });
    expect(linearTicks(0, 0).domain).toEqual([0, 1]);
  });

  it('puts log ticks at 1, 2 and 5 of each decade around the data, powers of ten over many decades', () => {
    expect(logTicks(3, 40)).toEqual({ ticks: [2, 5, 10, 20, 50], domain: [2, 50] });
    expect(logTicks(1, 100)).toEqual({ ticks: [1, 2, 5, 10, 20, 50, 100], domain: [1, 100] });
    expect(logTicks(2, 30_000).ticks).toEqual([1, 10, 100, 1000, 10_000, 100_000]);
  });

  it('maps values onto pixels, linearly or by their logarithm', () => {
    const linear = scaler([0, 10], [100, 200]);
    expect(linear(5)).toBe(150);
    const log = scaler([1, 100], [0, 200], true);
    expect(log(10)).toBeCloseTo(100, 6);
    expect(log(100)).toBeCloseTo(200, 6);
    // y axes run upwards: the larger value gets the smaller pixel.
    expect(scaler([0, 10], [300, 100])(10)).toBe(100);
  });

  it('formats tick labels and escapes text', () => {
    expect(formatTick(1000)).toBe('1,000');
    expect(formatTick(12.34)).toBe('12.3');
    expect(formatTick(2.5)).toBe('2.5');
    expect(formatTick(0.25)).toBe('0.25');
    expect(formatTick(0)).toBe('0');
    expect(escapeXml('a < b & "c" > d')).toBe('a &lt; b &amp; &quot;c&quot; &gt; d');
  });

  it('draws a well-formed document with every panel, series, point and legend entry', () => {
    const svg = chartSvg({
      title: 'Cost <per> delivery',
      note: ['machine & cores', 'load'],
      columns: 2,
      panels: [
        {
          title: 'Fan-out',
          xLabel: 'webhooks',
          yLabel: 'ms',
          xLog: true,
          xTicks: [1, 10, 100],
          series: [
            {
              name: 'net',
              points: [
                [1, 4],
                [10, 1.5],
                [100, 1.2],
              ],
            },
            {
              name: 'gross',
              points: [
                [1, 5],
                [10, 2],
                [100, NaN],
              ],
              dashed: true,
            },
          ],
        },
        { title: 'Empty', series: [{ name: 'none', points: [] }] },
        {
          title: 'Latency',
          yLog: true,
          series: [
            {
              name: 'p99',
              points: [
                [50, 3],
                [400, 900],
              ],
            },
          ],
        },
      ],
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="760" ')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('Cost &lt;per&gt; delivery');
    expect(svg).toContain('>machine &amp; cores</text>');
    expect(svg).toContain('>load</text>');
    // Two note lines under the title: the panels start below them.
    expect(svg).toContain('height="580"');
    expect(svg.match(/<polyline /g)).toHaveLength(3);
    // Five finite points: the NaN one is left out, the empty panel says so.
    expect(svg.match(/<circle /g)).toHaveLength(7);
    expect(svg).toContain('no data');
    expect(svg).toContain('stroke-dasharray="5 3"');
    for (const label of ['net', 'gross', 'p99', 'webhooks', '100']) expect(svg).toContain(`>${label}</text>`);
    // Balanced groups, no NaN coordinates.
    expect(svg.match(/<g>/g)).toHaveLength(3);
    expect(svg.match(/<\/g>/g)).toHaveLength(3);
    expect(svg).not.toContain('NaN');
  });
});

describe('curve figures', () => {
  const meter = (seconds, cpuSeconds) => ({
    seconds,
    cpuSeconds,
    systemCpuSeconds: Object.entries(cpuSeconds)
      .filter(([name]) => name !== BENCH_PROCESS)
      .reduce((sum, [, value]) => sum + value, 0),
    machineBusyCores: 1,
    otherCores: 0.1,
  });

  it('summarizes a point: percentiles, CPU per delivery gross and net of the idle background', () => {
    const idle = idleCores(meter(2, { delivery: 0.02, postgres: 0.04, [BENCH_PROCESS]: 0.5 }));
    expect(idle).toEqual({ delivery: 0.01, postgres: 0.02, [BENCH_PROCESS]: 0.25 });
    const point = summarizePoint({
      latencies: [9, 1, 5, 3, 7],
      events: 100,
      deliveries: 1000,
      cpu: meter(10, { delivery: 0.6, postgres: 0.4, [BENCH_PROCESS]: 3 }),
      idle,
    });
    expect(point.p50Ms).toBe(5);
    expect(point.p99Ms).toBe(9);
    expect(point.maxMs).toBe(9);
    expect(point.received).toBe(5);
    // Gross: (0.6 + 0.4) s over 1,000 deliveries; the benchmark's own process is not the system.
    expect(point.cpuMsPerDelivery).toBeCloseTo(1, 9);
    // Net: less 0.01 and 0.02 cores over 10 s.
    expect(point.perProcessMsPerDelivery.delivery).toBeCloseTo(0.5, 9);
    expect(point.perProcessMsPerDelivery.postgres).toBeCloseTo(0.2, 9);
    expect(point.perProcessMsPerDelivery).not.toHaveProperty(BENCH_PROCESS);
    expect(point.netCpuMsPerDelivery).toBeCloseTo(0.7, 9);
    expect(point.netCpuMsPerEvent).toBeCloseTo(7, 9);
  });

  it('splits PostgreSQL by service, per delivery', () => {
    const cpu = { ...meter(10, { postgres: 0.5 }), postgresBy: { delivery: 0.3, issue: 0.1, 'postgres (own work)': 0.1 } };
    const point = summarizePoint({ latencies: [1], events: 100, deliveries: 500, cpu, paths: { atOnce: 400, claimed: 100, meanWaitMs: 2 } });
    expect(point.postgresMsPerDelivery.delivery).toBeCloseTo(0.6, 9);
    expect(point.postgresMsPerDelivery.issue).toBeCloseTo(0.2, 9);
    expect(point.paths.claimed).toBe(100);
  });

  it("reads the delivery service's metrics: attempts by path and the mean wait for a slot", () => {
    const text = (atOnce, claim, sum, count) =>
      [
        '# HELP worklane_delivery_attempts_started_total Delivery attempts started',
        '# TYPE worklane_delivery_attempts_started_total counter',
        `worklane_delivery_attempts_started_total{path="at_once",service="delivery"} ${atOnce}`,
        `worklane_delivery_attempts_started_total{service="delivery",path="claim"} ${claim}`,
        `worklane_delivery_schedule_delay_seconds_bucket{le="0.01"} 3`,
        `worklane_delivery_schedule_delay_seconds_sum ${sum}`,
        `worklane_delivery_schedule_delay_seconds_count ${count}`,
        '',
      ].join('\n');
    const before = parseMetrics(text(10, 5, 0.5, 15));
    expect(before.get('worklane_delivery_schedule_delay_seconds_count')).toBe(15);
    expect(before.size).toBe(5);
    const paths = deliveryPaths(before, parseMetrics(text(110, 55, 2.5, 165)));
    expect(paths).toEqual({ atOnce: 100, claimed: 50, meanWaitMs: (2 / 150) * 1000 });
    expect(deliveryPaths(new Map(), new Map()).meanWaitMs).toBeNaN();
  });

  it("counts PostgreSQL's CPU over a span whatever its connections did", () => {
    const before = {
      postmaster: { own: 1, reaped: 5 },
      children: new Map([
        [10, 2],
        [11, 3],
        [12, 4],
      ]),
    };
    // 10 kept going (+1), 11 exited after using 0.5 more (reaped 3.5), 12 kept idle, 13 opened and used 0.25.
    const after = {
      postmaster: { own: 1.1, reaped: 8.5 },
      children: new Map([
        [10, 3],
        [12, 4],
        [13, 0.25],
      ]),
    };
    const span = postgresSpan(before, after);
    expect(span.ended).toBeCloseTo(0.5, 9);
    expect(span.own).toBeCloseTo(0.1, 9);
    expect(span.byPid.get(10)).toBeCloseTo(1, 9);
    expect(span.byPid.get(13)).toBeCloseTo(0.25, 9);
    expect(span.total).toBeCloseTo(0.1 + 0.5 + 1 + 0 + 0.25, 9);
  });

  it('writes a Markdown table', () => {
    expect(
      markdownTable(
        ['a', 'b'],
        [
          ['1', '2'],
          ['3', '4'],
        ],
      ),
    ).toBe('| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |');
  });

  it('finds where the cost bends and which processes moved it', () => {
    const points = [
      { x: 1, netCpuMsPerDelivery: 6, perProcessMsPerDelivery: { gateway: 1, issue: 2, delivery: 3 } },
      { x: 10, netCpuMsPerDelivery: 3.4, perProcessMsPerDelivery: { gateway: 0.1, issue: 0.2, delivery: 3.1 } },
      { x: 100, netCpuMsPerDelivery: 3, perProcessMsPerDelivery: { gateway: 0.01, issue: 0.02, delivery: 2.97 } },
    ];
    const bend = costBend(points);
    expect(bend.spread).toBeCloseTo(2, 9);
    expect(bend.flat).toBe(false);
    expect(bend.steepest.from.x).toBe(1);
    expect(bend.steepest.to.x).toBe(10);
    expect(bend.causes[0][0]).toBe('issue');
    expect(bend.causes[0][1]).toBeCloseTo(-1.8, 9);
    expect(bend.causes.map(([name]) => name)).toEqual(['issue', 'gateway', 'delivery']);
    const sentence = describeBend('fan-out', bend, (point) => `${point.x} webhooks`);
    expect(sentence).toContain('spreads 2.00x');
    expect(sentence).toContain(`flat within ${FLAT_WITHIN}x: MISSED`);
    expect(sentence).toContain('between 1 webhooks and 10 webhooks (x0.57)');
    expect(sentence).toContain('issue -1.80 ms, gateway -0.90 ms, delivery +0.10 ms');
    expect(costBend([points[1], { ...points[2], netCpuMsPerDelivery: 3.2 }]).flat).toBe(true);
    expect(costBend([points[0]])).toBeNull();
    expect(describeBend('tenants', null, String)).toContain('not enough points');
  });

  it('reads comma-separated lists and refuses anything else', () => {
    expect(parseList('X', '1, 10,100')).toEqual([1, 10, 100]);
    expect(() => parseList('X', '1,ten')).toThrow('X must be');
    expect(() => parseList('X', '')).toThrow('X must be');
    expect(() => parseList('X', '0')).toThrow('X must be');
  });
});

describe('inTurn', () => {
  it('runs at most `parallel` at a time and keeps the results in order', async () => {
    let running = 0;
    let most = 0;
    const results = await inTurn([5, 1, 4, 2, 3], 2, async (value, i) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      return value * 10 + i;
    });
    expect(results).toEqual([50, 11, 42, 23, 34]);
    expect(most).toBe(2);
    await expect(inTurn([], 4, async () => 1)).resolves.toEqual([]);
  });
});
