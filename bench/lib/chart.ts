/**
 * SVG charts: latency distributions (a panel per scenario, a cumulative curve per stack, log-scale x axis) and the
 * scaling run (a panel per measure, a line per stack against the number of documents).
 */

export interface Panel {
  title: string;
  series: Array<{ name: string; values: number[] }>;
}

const W = 360;
const H = 240;
const M = { l: 44, r: 12, t: 28, b: 36 };
const COLORS: Record<string, string> = {
  wave: '#1f77b4',
  'y-websocket': '#d62728',
  hocuspocus: '#2ca02c',
  'hocuspocus-mux': '#9467bd',
  'hocuspocus-sqlite': '#ff7f0e',
  'hocuspocus-sqlite-mux': '#8c564b',
};
const FALLBACK = ['#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function latencyChart(panels: Panel[], caption: string): string {
  const width = W * panels.length;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H + 24}" viewBox="0 0 ${width} ${H + 24}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
  ];
  panels.forEach((panel, i) => {
    const x0 = i * W;
    const all = panel.series.flatMap((s) => s.values).filter((v) => v > 0 && Number.isFinite(v));
    const lo = Math.max(0.05, Math.min(...all));
    const hi = Math.max(lo * 10, Math.max(...all));
    const lx = (v: number): number => x0 + M.l + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (W - M.l - M.r);
    const ly = (q: number): number => M.t + (1 - q) * (H - M.t - M.b);
    parts.push(`<text x="${x0 + W / 2}" y="16" text-anchor="middle" font-weight="bold">${esc(panel.title)}</text>`);
    parts.push(`<line x1="${x0 + M.l}" y1="${ly(0)}" x2="${x0 + W - M.r}" y2="${ly(0)}" stroke="#333"/>`);
    parts.push(`<line x1="${x0 + M.l}" y1="${ly(0)}" x2="${x0 + M.l}" y2="${ly(1)}" stroke="#333"/>`);
    for (let d = Math.ceil(Math.log10(lo)); d <= Math.floor(Math.log10(hi)); d++) {
      for (const m of [1, 2, 5]) {
        const v = m * 10 ** d;
        if (v < lo || v > hi) continue;
        parts.push(`<line x1="${lx(v)}" y1="${ly(0)}" x2="${lx(v)}" y2="${ly(1)}" stroke="#eee"/>`);
        parts.push(`<text x="${lx(v)}" y="${ly(0) + 13}" text-anchor="middle">${v}</text>`);
      }
    }
    for (const q of [0, 0.5, 0.9, 0.99]) {
      parts.push(`<line x1="${x0 + M.l}" y1="${ly(q)}" x2="${x0 + W - M.r}" y2="${ly(q)}" stroke="#eee"/>`);
      parts.push(`<text x="${x0 + M.l - 4}" y="${ly(q) + 4}" text-anchor="end">p${Math.round(q * 100)}</text>`);
    }
    parts.push(`<text x="${x0 + W / 2}" y="${H - 4}" text-anchor="middle">latency, ms (log)</text>`);
    panel.series.forEach((s, k) => {
      const v = [...s.values].filter(Number.isFinite).sort((a, b) => a - b);
      if (v.length === 0) return;
      const color = COLORS[s.name] ?? FALLBACK[k % FALLBACK.length];
      const step = Math.max(1, Math.floor(v.length / 400));
      const pts: string[] = [];
      for (let j = 0; j < v.length; j += step) pts.push(`${lx(v[j]!).toFixed(1)},${ly((j + 1) / v.length).toFixed(1)}`);
      pts.push(`${lx(v[v.length - 1]!).toFixed(1)},${ly(1).toFixed(1)}`);
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.6" points="${pts.join(' ')}"/>`);
      parts.push(`<rect x="${x0 + M.l + 8}" y="${M.t + 6 + k * 14}" width="10" height="3" fill="${color}"/>`);
      parts.push(`<text x="${x0 + M.l + 22}" y="${M.t + 10 + k * 14}">${esc(s.name)}</text>`);
    });
  });
  parts.push(`<text x="8" y="${H + 16}" fill="#555">${esc(caption)}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

/** One panel of the scaling chart: a measure against the number of documents, a line per stack. */
export interface ScalingPanel {
  title: string;
  /** Axis label of the measure, e.g. "ms". */
  unit: string;
  /** Per stack, one point per size: the median and the min–max spread over runs. */
  series: Array<{ name: string; points: Array<{ x: number; y: number; lo: number; hi: number }> }>;
}

/**
 * The scaling chart: panels side by side, documents on a log₂ x axis, a linear y axis from 0, whiskers for min–max,
 * and one legend for all panels in a row above them (the stacks are the same in each).
 */
export function scalingChart(panels: ScalingPanel[], caption: string): string {
  const width = W * panels.length;
  /** Height of the legend row, above the panels. */
  const LEGEND = 20;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H + 24 + LEGEND}" viewBox="0 0 ${width} ${H + 24 + LEGEND}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
  ];
  const names = [...new Set(panels.flatMap((p) => p.series.map((s) => s.name)))];
  const colorOf = (name: string): string => COLORS[name] ?? FALLBACK[names.indexOf(name) % FALLBACK.length]!;
  let lx0 = M.l;
  for (const name of names) {
    parts.push(`<rect x="${lx0}" y="9" width="10" height="3" fill="${colorOf(name)}"/>`);
    parts.push(`<text x="${lx0 + 14}" y="14">${esc(name)}</text>`);
    lx0 += 14 + 7 * name.length + 18;
  }
  parts.push(`<g transform="translate(0 ${LEGEND})">`);
  panels.forEach((panel, i) => {
    const x0 = i * W;
    const pts = panel.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.y));
    const xs = [...new Set(pts.map((p) => p.x))].sort((a, b) => a - b);
    if (xs.length === 0) return;
    const lo = xs[0]!;
    const hi = Math.max(xs[xs.length - 1]!, lo * 2);
    const step = niceStep((Math.max(...pts.map((p) => (Number.isFinite(p.hi) ? p.hi : p.y))) * 1.05) / 4);
    const top = step * Math.max(1, Math.ceil((Math.max(...pts.map((p) => (Number.isFinite(p.hi) ? p.hi : p.y))) * 1.05) / step));
    // Inner margins of 18 px keep the first and last sizes' whiskers off the axes.
    const lx = (v: number): number => x0 + M.l + 18 + ((Math.log2(v) - Math.log2(lo)) / (Math.log2(hi) - Math.log2(lo))) * (W - M.l - M.r - 36);
    const ly = (v: number): number => M.t + (1 - v / top) * (H - M.t - M.b);
    parts.push(`<text x="${x0 + W / 2}" y="16" text-anchor="middle" font-weight="bold">${esc(panel.title)}</text>`);
    parts.push(`<line x1="${x0 + M.l}" y1="${ly(0)}" x2="${x0 + W - M.r}" y2="${ly(0)}" stroke="#333"/>`);
    parts.push(`<line x1="${x0 + M.l}" y1="${ly(0)}" x2="${x0 + M.l}" y2="${ly(top)}" stroke="#333"/>`);
    for (let k = 0; k * step <= top * (1 + 1e-9); k++) {
      const v = k * step;
      parts.push(`<line x1="${x0 + M.l}" y1="${ly(v)}" x2="${x0 + W - M.r}" y2="${ly(v)}" stroke="#eee"/>`);
      parts.push(`<text x="${x0 + M.l - 4}" y="${ly(v) + 4}" text-anchor="end">${+v.toPrecision(3)}</text>`);
    }
    for (const x of xs) {
      parts.push(`<line x1="${lx(x)}" y1="${ly(0)}" x2="${lx(x)}" y2="${ly(top)}" stroke="#eee"/>`);
      parts.push(`<text x="${lx(x)}" y="${ly(0) + 13}" text-anchor="middle">${x.toLocaleString('en-US')}</text>`);
    }
    parts.push(`<text x="${x0 + W / 2}" y="${H - 4}" text-anchor="middle">documents × 2 clients (log scale); y: ${esc(panel.unit)}</text>`);
    panel.series.forEach((s, k) => {
      const ok = s.points.filter((p) => Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
      if (ok.length === 0) return;
      const color = colorOf(s.name);
      // Stacks side by side by a few pixels, so that whiskers at the same size do not hide each other.
      const dx = (k - (panel.series.length - 1) / 2) * 3;
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.6" points="${ok.map((p) => `${(lx(p.x) + dx).toFixed(1)},${ly(p.y).toFixed(1)}`).join(' ')}"/>`);
      for (const p of ok) {
        if (Number.isFinite(p.lo) && Number.isFinite(p.hi) && p.hi > p.lo) parts.push(`<line x1="${(lx(p.x) + dx).toFixed(1)}" y1="${ly(p.lo).toFixed(1)}" x2="${(lx(p.x) + dx).toFixed(1)}" y2="${ly(p.hi).toFixed(1)}" stroke="${color}"/>`);
        parts.push(`<circle cx="${(lx(p.x) + dx).toFixed(1)}" cy="${ly(p.y).toFixed(1)}" r="2.5" fill="${color}"/>`);
      }
    });
  });
  parts.push('</g>');
  parts.push(`<text x="8" y="${H + 16 + LEGEND}" fill="#555">${esc(caption)}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

/** The smallest of 1, 2, 5 × 10^k at or above v (a round tick step). */
function niceStep(v: number): number {
  if (!(v > 0)) return 1;
  const e = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * e >= v) return m * e;
  return 10 * e;
}
