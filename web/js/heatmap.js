// The distributions' heat map, drawn on a plain canvas: x the step (a column per step, or per
// group of consecutive steps), y the value (equal bins), the colour a bin's share of its column's
// finite elements (/api/heatmap). Numbers are drawn with fillText; names are not drawn here.
import { num } from './api.js';
import { chartWidth } from './chart.js';

// The plot area's margins when no chart above gives them.
const kLeft = 70, kRight = 10, kTop = 8, kBottom = 28;
const kTicks = 5;

// Light to dark blue, as the percentile bands.
function colour(share) {
  const t = Math.sqrt(share);   // the tails stay visible beside a peaked column
  const from = [247, 251, 255], to = [8, 48, 107];
  const c = from.map((f, i) => Math.round(f + (to[i] - f) * t));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

function label(v) {
  return Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(2) : String(+v.toPrecision(4));
}

// Draws the answer of /api/heatmap into el. steps: the x axis of a chart drawn above it
// ({left, width} of its plot area in CSS pixels from el's left, {min, max} of its step scale), so
// the steps line up; onHover(text) gets the steps, bin and count under the pointer (or '' when
// it leaves). Returns the canvas.
export function drawHeatmap(el, h, { height = 170, steps, onHover } = {}) {
  const width = chartWidth(el);
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  el.replaceChildren(canvas);
  const ctx = canvas.getContext('2d');
  const n = h.first_steps.length;
  const x0 = steps ? steps.min : h.first_steps[0], x1 = steps ? steps.max : h.last_steps[n - 1];
  const plotL = steps ? steps.left : kLeft, plotW = steps ? steps.width : width - kLeft - kRight;
  const plotH = height - kTop - kBottom;
  const lo = num(h.lo), hi = num(h.hi);
  const xPos = (step) => plotL + (x1 > x0 ? ((step - x0) / (x1 - x0)) * plotW : plotW / 2);
  // A column is centred on its steps and reaches halfway to its neighbours.
  const centre = (k) => xPos((h.first_steps[k] + h.last_steps[k]) / 2);
  const edges = [];
  for (let k = 1; k < n; k++) edges.push((centre(k - 1) + centre(k)) / 2);
  const half = n > 1 ? (centre(n - 1) - centre(0)) / (2 * (n - 1)) : plotW / 2;   // the first and last: half the mean spacing
  edges.unshift(centre(0) - half);
  edges.push(centre(n - 1) + half);
  const rowH = plotH / h.bins;
  // The largest share of any bin, so the darkest colour is the densest bin of the map.
  let top = 0;
  h.counts.forEach((column, k) => { for (const c of column) if (h.totals[k]) top = Math.max(top, c / h.totals[k]); });
  ctx.save();
  ctx.beginPath();
  ctx.rect(plotL, kTop, plotW, plotH);
  ctx.clip();
  h.counts.forEach((column, k) => {
    const left = edges[k], right = edges[k + 1];
    column.forEach((count, b) => {
      if (!count) return;
      ctx.fillStyle = colour(count / h.totals[k] / top);
      ctx.fillRect(left, kTop + plotH - (b + 1) * rowH, Math.max(1, right - left), Math.max(1, rowH));
    });
  });
  ctx.restore();
  ctx.strokeStyle = '#ccc';
  ctx.strokeRect(plotL + 0.5, kTop + 0.5, plotW, plotH);
  ctx.fillStyle = '#444';
  ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let i = 0; i <= kTicks; i++) ctx.fillText(label(lo + ((hi - lo) * i) / kTicks), plotL - 6, kTop + plotH - (plotH * i) / kTicks);
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (let i = 0; i <= kTicks; i++) {
    const step = Math.round(x0 + ((x1 - x0) * i) / kTicks);
    ctx.fillText(String(step), xPos(step), kTop + plotH + 6);
  }
  if (onHover) {
    canvas.addEventListener('mousemove', (e) => {
      const r = canvas.getBoundingClientRect();
      const x = e.clientX - r.left, y = e.clientY - r.top;
      const b = Math.floor((kTop + plotH - y) / rowH);
      const k = edges.findLastIndex((e) => e <= x);
      if (x < plotL || x > plotL + plotW || k < 0 || k >= n || b < 0 || b >= h.bins) return onHover('');
      const steps = h.first_steps[k] === h.last_steps[k] ? `step ${h.first_steps[k]}` : `steps ${h.first_steps[k]}-${h.last_steps[k]}`;
      const binLo = lo + ((hi - lo) * b) / h.bins, binHi = lo + ((hi - lo) * (b + 1)) / h.bins;
      onHover(`${steps}, values ${label(binLo)} to ${label(binHi)}: ${h.counts[k][b]} of ${h.totals[k]} elements`);
    });
    canvas.addEventListener('mouseleave', () => onHover(''));
  }
  return canvas;
}
