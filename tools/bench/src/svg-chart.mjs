// Line charts as SVG text, for the figures the benchmarks write into docs/: no plotting library,
// just axes, ticks, one polyline per series with its points marked, and a legend. Pure functions.

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];
const FONT = 'font-family="Helvetica, Arial, sans-serif"';

/** Escapes text for an SVG text node or attribute. */
export const escapeXml = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A tick label: thousands separated, small values with the digits they need. */
export function formatTick(value) {
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 10) return String(Math.round(value * 10) / 10);
  if (abs >= 1) return String(Math.round(value * 100) / 100);
  return String(Number(value.toPrecision(2)));
}

/** The "nice" step (1, 2, 2.5 or 5 times a power of ten) giving about `count` intervals over `span`. */
export function niceStep(span, count = 5) {
  if (!(span > 0)) return 1;
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
  return nice * power;
}

/** Ticks of a linear axis from 0 (or `min` when below 0) past `max`: { ticks, domain: [lo, hi] }. */
export function linearTicks(min, max, count = 5) {
  const lo = Math.min(0, min);
  const hi = max > lo ? max : lo + 1;
  const step = niceStep(hi - lo, count);
  const first = Math.floor(lo / step) * step;
  const last = Math.ceil(hi / step) * step;
  const ticks = [];
  for (let value = first; value <= last + step / 2; value += step) ticks.push(Number(value.toPrecision(12)));
  return { ticks, domain: [first, last] };
}

/** Ticks of a logarithmic axis over [min, max] (both > 0): 1-2-5 per decade, or powers of ten only over many decades. */
export function logTicks(min, max) {
  const lo = 10 ** Math.floor(Math.log10(min));
  const hi = 10 ** Math.ceil(Math.log10(max));
  const decades = Math.round(Math.log10(hi / lo));
  const digits = decades > 3 ? [1] : [1, 2, 5];
  const ticks = [];
  for (let power = lo; power <= hi * 1.0001; power *= 10) {
    for (const digit of digits) {
      const value = Number((digit * power).toPrecision(12));
      if (value >= lo && value <= hi * 1.0001) ticks.push(value);
    }
  }
  // Trim to the ticks around the data, keeping one below and one above it.
  const below = ticks.filter((value) => value <= min).pop() ?? ticks[0];
  const above = ticks.find((value) => value >= max) ?? ticks[ticks.length - 1];
  const kept = ticks.filter((value) => value >= below && value <= above);
  return { ticks: kept, domain: [below, above] };
}

/** Maps values of [d0, d1] (linear or log) onto pixels [p0, p1]. */
export function scaler([d0, d1], [p0, p1], log = false) {
  const f = log ? Math.log10 : (value) => value;
  const a = f(d0);
  const b = f(d1);
  const span = b - a || 1;
  return (value) => p0 + ((f(value) - a) / span) * (p1 - p0);
}

const finitePoints = (points, log) => points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!log.x || x > 0) && (!log.y || y > 0));

/**
 * One panel at (left, top), width x height: title, axes with ticks, one line per series.
 * panel: { title, xLabel, yLabel, xLog, yLog, xTicks?, series: [{ name, points: [[x, y]…], dashed? }] }
 */
export function panelSvg(panel, { left, top, width, height }) {
  const log = { x: Boolean(panel.xLog), y: Boolean(panel.yLog) };
  const series = panel.series.map((line, i) => ({ ...line, color: line.color ?? COLORS[i % COLORS.length], points: finitePoints(line.points, log) }));
  const all = series.flatMap((line) => line.points);
  // The legend runs in a row between the title and the plot, so it never covers a line.
  const margin = { left: 58, right: 12, top: 40, bottom: 44 };
  const plot = { x0: left + margin.left, x1: left + width - margin.right, y0: top + height - margin.bottom, y1: top + margin.top };
  const parts = [`<text x="${left + width / 2}" y="${top + 16}" text-anchor="middle" font-size="13" font-weight="bold" ${FONT}>${escapeXml(panel.title)}</text>`];
  if (all.length === 0) {
    parts.push(`<text x="${left + width / 2}" y="${top + height / 2}" text-anchor="middle" font-size="12" ${FONT}>no data</text>`);
    return parts.join('\n');
  }
  const xs = all.map(([x]) => x);
  const ys = all.map(([, y]) => y);
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  let xDomain;
  let xTicks;
  if (panel.xTicks) {
    xTicks = panel.xTicks;
    xDomain = [Math.min(xMin, ...xTicks), Math.max(xMax, ...xTicks)];
  } else if (log.x) ({ ticks: xTicks, domain: xDomain } = logTicks(xMin, xMax));
  else ({ ticks: xTicks, domain: xDomain } = linearTicks(xMin, xMax));
  if (xDomain[0] === xDomain[1]) xDomain = log.x ? [xDomain[0] / 2, xDomain[1] * 2] : [xDomain[0] - 1, xDomain[1] + 1];
  const { ticks: yTicks, domain: yDomain } = log.y ? logTicks(Math.min(...ys), Math.max(...ys)) : linearTicks(Math.min(...ys), Math.max(...ys));
  // A little room at the ends of the x axis so end points are not drawn on the frame.
  const pad = (plot.x1 - plot.x0) * 0.04;
  const x = scaler(xDomain, [plot.x0 + pad, plot.x1 - pad], log.x);
  const y = scaler(yDomain, [plot.y0, plot.y1], log.y);
  const r = (value) => Math.round(value * 10) / 10;
  parts.push(`<rect x="${plot.x0}" y="${plot.y1}" width="${r(plot.x1 - plot.x0)}" height="${r(plot.y0 - plot.y1)}" fill="none" stroke="#999"/>`);
  for (const tick of yTicks) {
    const py = r(y(tick));
    parts.push(`<line x1="${plot.x0}" y1="${py}" x2="${plot.x1}" y2="${py}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${plot.x0 - 5}" y="${r(py + 4)}" text-anchor="end" font-size="10" ${FONT}>${escapeXml(formatTick(tick))}</text>`);
  }
  for (const tick of xTicks) {
    const px = r(x(tick));
    parts.push(`<line x1="${px}" y1="${plot.y0}" x2="${px}" y2="${plot.y0 + 4}" stroke="#999"/>`);
    parts.push(`<text x="${px}" y="${plot.y0 + 16}" text-anchor="middle" font-size="10" ${FONT}>${escapeXml(formatTick(tick))}</text>`);
  }
  parts.push(`<text x="${r((plot.x0 + plot.x1) / 2)}" y="${plot.y0 + 34}" text-anchor="middle" font-size="11" ${FONT}>${escapeXml(panel.xLabel ?? '')}</text>`);
  const yMid = r((plot.y0 + plot.y1) / 2);
  parts.push(`<text x="${left + 14}" y="${yMid}" text-anchor="middle" font-size="11" transform="rotate(-90 ${left + 14} ${yMid})" ${FONT}>${escapeXml(panel.yLabel ?? '')}</text>`);
  // About 6 px a character at font-size 10, plus the sample line and a gap.
  const legendOffsets = series.reduce((offsets, line, i) => [...offsets, offsets[i] + 22 + String(line.name).length * 6 + 14], [0]);
  series.forEach((line, i) => {
    if (line.points.length === 0) return;
    const coords = line.points.map(([px, py]) => `${r(x(px))},${r(y(py))}`).join(' ');
    const dash = line.dashed ? ' stroke-dasharray="5 3"' : '';
    parts.push(`<polyline points="${coords}" fill="none" stroke="${line.color}" stroke-width="2"${dash}/>`);
    for (const [px, py] of line.points) {
      parts.push(
        `<circle cx="${r(x(px))}" cy="${r(y(py))}" r="3" fill="${line.color}"><title>${escapeXml(`${line.name}: ${formatTick(px)} -> ${formatTick(py)}`)}</title></circle>`,
      );
    }
    const lx = plot.x0 + legendOffsets[i];
    const ly = top + 31;
    parts.push(`<line x1="${lx}" y1="${ly - 4}" x2="${lx + 18}" y2="${ly - 4}" stroke="${line.color}" stroke-width="2"${dash}/>`);
    parts.push(`<text x="${lx + 22}" y="${ly}" font-size="10" ${FONT}>${escapeXml(line.name)}</text>`);
  });
  return parts.join('\n');
}

/**
 * A whole SVG document: a title, optional note lines under it, and panels in a grid of `columns`.
 * chart: { title, note?: string | string[], columns?, panelWidth?, panelHeight?, panels: [panel…] }
 * (panel as in panelSvg).
 */
export function chartSvg({ title, note, panels, columns = panels.length, panelWidth = 380, panelHeight = 260 }) {
  const notes = note === undefined ? [] : [note].flat();
  const header = 30 + notes.length * 15;
  const rows = Math.ceil(panels.length / columns);
  const width = columns * panelWidth;
  const height = header + rows * panelHeight;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold" ${FONT}>${escapeXml(title)}</text>`,
  ];
  notes.forEach((line, i) => parts.push(`<text x="${width / 2}" y="${38 + i * 15}" text-anchor="middle" font-size="11" fill="#555" ${FONT}>${escapeXml(line)}</text>`));
  panels.forEach((panel, i) => {
    const left = (i % columns) * panelWidth;
    const top = header + Math.floor(i / columns) * panelHeight;
    parts.push(`<g>`, panelSvg(panel, { left, top, width: panelWidth, height: panelHeight }), `</g>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
