/** One SVG of latency distributions: a panel per scenario, a cumulative curve per stack (log-scale x axis). */

export interface Panel {
  title: string;
  series: Array<{ name: string; values: number[] }>;
}

const W = 360;
const H = 240;
const M = { l: 44, r: 12, t: 28, b: 36 };
const COLORS: Record<string, string> = { wave: '#1f77b4', 'y-websocket': '#d62728', hocuspocus: '#2ca02c', 'hocuspocus-mux': '#9467bd' };
const FALLBACK = ['#ff7f0e', '#8c564b', '#e377c2', '#7f7f7f'];

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
