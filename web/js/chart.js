// Charts drawn with uPlot: line charts of several series on one step axis, with the palette,
// sizing and interactions the views share. Every label is drawn as text (uPlot's legend sets
// textContent; the page never writes HTML).

export const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf', '#393b79', '#ad494a', '#637939', '#8c6d31', '#843c39', '#7b4173'];

export function chartWidth(el) {
  return Math.max(400, Math.floor(el.getBoundingClientRect().width || el.parentElement.clientWidth) - 10);
}

// Lines on one x axis. lines: [{label, xs, ys, dash?, color?}] (xs ascending); opts: {logY,
// height, onRange(lo, hi) when a step range is dragged, onCursor(x) on hover, onClick(x, shift),
// marker: an x to mark with a vertical line}. Returns the uPlot.
export function lineChart(el, lines, opts = {}) {
  el.replaceChildren();
  const tables = lines.map((l) => [l.xs, opts.logY ? l.ys.map((y) => (y > 0 ? y : null)) : l.ys]);
  const data = tables.length ? uPlot.join(tables) : [[]];
  const series = [{ label: opts.xLabel || 'step' }];
  lines.forEach((l, i) => series.push({
    label: l.label,
    stroke: l.color || palette[i % palette.length],
    width: l.width || 1.5,
    dash: l.dash,
    spanGaps: true,
    points: { show: l.points || false, size: 5 },
    paths: l.paths,
    fill: l.fill,
  }));
  const plugins = [];
  if (opts.marker !== undefined && opts.marker !== null) plugins.push(markerPlugin(opts.marker));
  const u = new uPlot({
    width: chartWidth(el),
    height: opts.height || 360,
    series,
    bands: opts.bands,
    scales: { x: { time: false }, y: opts.logY ? { distr: 3 } : {} },
    axes: [{}, { size: 70 }],
    cursor: { drag: { x: true, y: false, setScale: false } },
    legend: { show: opts.legend !== false, live: true },
    plugins,
    hooks: {
      setSelect: [(self) => {
        if (self.select.width > 2 && opts.onRange) {
          const lo = self.posToVal(self.select.left, 'x');
          const hi = self.posToVal(self.select.left + self.select.width, 'x');
          opts.onRange(Math.floor(lo), Math.ceil(hi));
        }
        self.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
      }],
      setCursor: [(self) => {
        if (opts.onCursor && self.cursor.idx !== null && self.cursor.idx !== undefined)
          opts.onCursor(self.data[0][self.cursor.idx]);
      }],
    },
  }, data, el);
  if (opts.onClick)
    u.over.addEventListener('click', (e) => {
      if (u.cursor.idx !== null && u.cursor.idx !== undefined) opts.onClick(u.data[0][u.cursor.idx], e.shiftKey);
    });
  return u;
}

// A dashed vertical line at step x (a finding's step).
function markerPlugin(x) {
  return {
    hooks: {
      draw: [(u) => {
        const px = u.valToPos(x, 'x', true);
        const ctx = u.ctx;
        ctx.save();
        ctx.strokeStyle = '#d62728';
        ctx.setLineDash([4, 4]);
        ctx.beginPath();
        ctx.moveTo(px, u.bbox.top);
        ctx.lineTo(px, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.restore();
      }],
    },
  };
}

// A message in place of a chart.
export function emptyChart(el, message) {
  const p = document.createElement('p');
  p.className = 'hint';
  p.textContent = message;
  el.replaceChildren(p);
}

// Escapes a name for a Python regular expression matching it whole.
export function exactRegex(name) {
  return '^' + name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
}
