// The distributions view: a tensor's percentile bands over steps (p0-p100, p5-p95, p25-p75, the
// median) from the distributions view, its heat map over the same steps (histogram_buckets in
// value bins), and the histograms of chosen steps, overlaid. Dragging across the bands chooses
// the step range of both.
import { get, num } from './api.js';
import { lineChart, emptyChart, palette } from './chart.js';
import { drawHeatmap } from './heatmap.js';
import { chosenTrials } from './trials.js';

const $ = (id) => document.getElementById(id);
const kHistogramBins = 60;
const kMaxSteps = 6;
const kHeatmapBins = 48;

// gen: the latest drawing asked for; an older one still waiting for the server draws nothing.
// range: [from, to] steps, or null for all.
export const distributions = { steps: [], range: null, drawn: '', gen: 0 };

function fill(select, values, keep) {
  const current = keep ? select.value : '';
  select.replaceChildren(...values.map((v) => new Option(v, v)));
  if (values.includes(current)) select.value = current;
}

// Refills the trial and tensor choices (keeping what was chosen when it is still there).
export async function refreshDistributionChoices() {
  fill($('di-trial'), chosenTrials(), true);
  const trial = $('di-trial').value;
  if (!trial) return;
  const answer = await get('/api/tensors', { trial });
  const names = answer.tensors.map((t) => t.tensor);
  const before = $('di-tensor').value;
  fill($('di-tensor'), names, true);
  if (!before) {   // a first choice: a weight or gradient rather than a scalar, when there is one
    const guess = names.find((n) => /weight/i.test(n)) || names.find((n) => /gradient|relu|output/i.test(n));
    if (guess) $('di-tensor').value = guess;
  }
}

export async function drawDistribution(live = false) {
  const gen = ++distributions.gen;
  const el = $('di-chart');
  const trial = $('di-trial').value, tensor = $('di-tensor').value;
  if (!trial || !tensor) {
    emptyChart(el, 'Choose a trial and a tensor.');
    return;
  }
  const [from, to] = distributions.range || ['', ''];
  const d = await get('/api/distribution', { trial, tensor, worker: $('di-worker').value, from, to });
  if (gen !== distributions.gen) return;
  fill($('di-worker'), d.workers, true);
  if ($('di-worker').value !== d.worker && d.workers.includes(d.worker)) $('di-worker').value = d.worker;
  const key = JSON.stringify([d.steps.length, trial, tensor, d.worker, distributions.steps, distributions.range]);
  if (live && key === distributions.drawn) return;
  distributions.drawn = key;
  const range = distributions.range ? `steps ${from} to ${to}` : 'every step';
  $('di-summary').textContent = `${trial} · ${tensor} · worker ${d.worker || '-'}: ${d.steps.length} steps, ${range}`;
  if (!d.steps.length) {
    emptyChart(el, 'No distribution for this tensor in these steps: it was saved as reductions or shapes only, or is not numeric.');
    $('di-heatmap').replaceChildren();
    $('di-histogram').replaceChildren();
    return;
  }
  const p = (name) => d.percentiles[name].map(num);
  const band = (name, color) => ({ label: name, xs: d.steps, ys: p(name), color, width: 1 });
  const lines = [band('p0', '#9ecae1'), band('p100', '#9ecae1'), band('p5', '#6baed6'), band('p95', '#6baed6'),
    band('p25', '#3182bd'), band('p75', '#3182bd'), { label: 'p50', xs: d.steps, ys: p('p50'), color: '#08306b', width: 2 }];
  const bands = lineChart(el, lines, {
    height: 200,
    onRange: (lo, hi) => { distributions.range = [lo, hi]; drawDistribution(); },
    bands: [{ series: [2, 1], fill: 'rgba(158,202,225,0.35)' }, { series: [4, 3], fill: 'rgba(107,174,214,0.4)' },
      { series: [6, 5], fill: 'rgba(49,130,189,0.45)' }],
    onClick: (step, shift) => {
      distributions.steps = shift ? [...distributions.steps.filter((s) => s !== step), step].slice(-kMaxSteps) : [step];
      drawHistograms();
    },
  });
  if (!distributions.steps.length || !distributions.steps.every((s) => d.steps.includes(s)))
    distributions.steps = [d.steps[d.steps.length - 1]];
  await Promise.all([drawHeat(trial, tensor, d.worker, from, to, bands), drawHistograms()]);
}

// The step axis of the uPlot chart u (laid out), for a chart drawn below it in el (heatmap.js).
function stepAxis(u, el) {
  const plot = u.over.getBoundingClientRect();
  if (!(plot.width > 0)) return undefined;
  return { left: plot.left - el.getBoundingClientRect().left, width: plot.width, min: u.scales.x.min, max: u.scales.x.max };
}

// The heat map of the same steps as the bands chart, one column per step up to the canvas's
// width in pixels, its steps under the chart's.
async function drawHeat(trial, tensor, worker, from, to, bands) {
  const el = $('di-heatmap');
  const gen = distributions.gen;
  const h = await get('/api/heatmap', { trial, tensor, worker, from, to, bins: kHeatmapBins,
    columns: Math.max(1, Math.floor(el.getBoundingClientRect().width)) });
  if (gen !== distributions.gen) return;
  if (!h.first_steps.length) {
    emptyChart(el, 'No steps in this range.');
    return;
  }
  drawHeatmap(el, h, { steps: stepAxis(bands, el), onHover: (text) => { $('di-heatmap-readout').textContent = text; } });
  performance.mark('trialdb-heatmap-drawn');
}

// The histograms of the chosen steps, their buckets spread over equal bins of the joint range.
async function drawHistograms() {
  const el = $('di-histogram');
  const trial = $('di-trial').value, tensor = $('di-tensor').value;
  if (!trial || !tensor || !distributions.steps.length) return;
  const gen = distributions.gen;
  const answer = await get('/api/histogram', { trial, tensor, worker: $('di-worker').value, step: distributions.steps });
  if (gen !== distributions.gen) return;
  let lo = Infinity, hi = -Infinity;
  for (const h of answer.histograms)
    for (let i = 0; i < h.lo.length; i++) { lo = Math.min(lo, num(h.lo[i])); hi = Math.max(hi, num(h.hi[i])); }
  if (!(hi > lo)) {
    emptyChart(el, 'No finite elements at these steps (or a single value).');
    return;
  }
  const width = (hi - lo) / kHistogramBins;
  const centers = Array.from({ length: kHistogramBins }, (_, i) => lo + (i + 0.5) * width);
  const lines = answer.histograms.map((h, k) => {
    const counts = new Array(kHistogramBins).fill(0);
    for (let i = 0; i < h.lo.length; i++) {
      const mid = (num(h.lo[i]) + num(h.hi[i])) / 2;
      counts[Math.min(kHistogramBins - 1, Math.max(0, Math.floor((mid - lo) / width)))] += h.count[i];
    }
    return { label: `step ${h.step}`, xs: centers, ys: counts, color: palette[k % palette.length],
      paths: uPlot.paths.stepped({ align: 0 }) };
  });
  lineChart(el, lines, { height: 240, xLabel: 'value' });
}

export function initDistributions() {
  $('di-trial').addEventListener('change', async () => {
    $('di-tensor').value = '';
    distributions.range = null;
    $('di-worker').replaceChildren();   // the new trial's first worker, unless one is chosen
    await refreshDistributionChoices();
    drawDistribution();
  });
  $('di-tensor').addEventListener('change', () => { distributions.steps = []; distributions.range = null; drawDistribution(); });
  $('di-worker').addEventListener('change', () => drawDistribution());
  $('di-reset').addEventListener('click', () => { distributions.range = null; drawDistribution(); });
  $('di-chart').addEventListener('dblclick', () => { distributions.range = null; drawDistribution(); });
}
