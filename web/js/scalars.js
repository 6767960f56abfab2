// The scalars view: reductions of the chosen tensors over steps for the chosen trials, TRAIN and
// EVAL apart, smoothed and downsampled by the server, with a step range, log or linear y and
// the exact values at the cursor.
import { get, num } from './api.js';
import { lineChart, emptyChart } from './chart.js';
import { chosenTrials } from './trials.js';

const $ = (id) => document.getElementById(id);

// What the view shows; range: [from, to] steps or null for all; marker: a step to mark.
// gen: the latest drawing asked for; an older one still waiting for the server draws nothing.
export const scalars = { range: null, marker: null, chart: null, drawn: '', gen: 0 };

function modes() {
  const m = [];
  if ($('sc-train').checked) m.push('TRAIN');
  if ($('sc-eval').checked) m.push('EVAL');
  return m;
}

function selection() {
  return {
    trial: chosenTrials(),
    tensor: $('sc-tensor').value,
    collection: $('sc-collection').value,
    reduction: $('sc-reduction').value,
    abs: $('sc-abs').checked ? 1 : 0,
    from: scalars.range ? scalars.range[0] : '',
    to: scalars.range ? scalars.range[1] : '',
  };
}

function keepMode(mode) {
  if (mode === 'TRAIN') return $('sc-train').checked;
  if (mode === 'EVAL') return $('sc-eval').checked;
  return $('sc-other').checked;
}

// Fetches and draws the chart; `live` redraws only when the answer changed.
export async function drawScalars(live = false) {
  const gen = ++scalars.gen;
  const el = $('sc-chart');
  const sel = selection();
  if (!sel.trial.length) {
    emptyChart(el, 'Choose a trial in the list.');
    scalars.chart = null;
    return;
  }
  const points = Math.max(200, Math.min(4000, 2 * Math.floor(el.getBoundingClientRect().width || 1000)));
  const answer = await get('/api/scalars', { ...sel, points, smoothing: $('sc-smoothing').value });
  if (gen !== scalars.gen) return;
  const lines = answer.lines.filter((l) => keepMode(l.mode));
  const multiTrial = new Set(lines.map((l) => l.trial)).size > 1 || sel.trial.length > 1;
  const drawn = lines.map((l) => ({
    label: `${multiTrial ? l.trial + ' · ' : ''}${l.tensor} ${l.mode}`,
    xs: l.steps,
    ys: l.values.map(num),
    dash: l.mode === 'EVAL' ? [6, 3] : undefined,
  }));
  const key = JSON.stringify([drawn, $('sc-log').checked, scalars.marker]);
  if (live && key === scalars.drawn) return;
  scalars.drawn = key;
  const range = scalars.range ? `steps ${scalars.range[0]} to ${scalars.range[1]}` : 'every step';
  $('sc-summary').textContent = `${lines.length} line${lines.length === 1 ? '' : 's'}, ${answer.total_points} points, ${range}` +
    (answer.downsampled ? ' (drawn downsampled, extremes kept)' : '') + (answer.lines_cut ? ' — more lines matched than are drawn' : '');
  if (!drawn.length) {
    emptyChart(el, `No ${sel.reduction} reductions for these tensors in the chosen trials and modes.`);
    scalars.chart = null;
    return;
  }
  scalars.chart = lineChart(el, drawn, {
    logY: $('sc-log').checked,
    marker: scalars.marker,
    onRange: (lo, hi) => { scalars.range = [lo, hi]; drawScalars(); },
    onCursor: hoverAt,
  });
  performance.mark('trialdb-scalars-drawn');
}

let hoverTimer = null;
// The exact values of every line at the step under the cursor (debounced).
function hoverAt(step) {
  clearTimeout(hoverTimer);
  hoverTimer = setTimeout(async () => {
    const sel = selection();
    if (!sel.trial.length) return;
    const answer = await get('/api/scalars/at', { ...sel, step });
    const table = $('sc-hover');
    table.replaceChildren();
    const head = table.insertRow();
    head.insertCell().textContent = `exact values at step ${answer.step}`;
    for (const v of answer.values.filter((x) => keepMode(x.mode))) {
      const row = table.insertRow();
      row.insertCell().textContent = `${v.trial} · ${v.tensor} ${v.mode}`;
      row.insertCell().textContent = `step ${v.step}`;
      row.insertCell().textContent = String(num(v.value));
    }
  }, 60);
}

let redrawTimer = null;
function redrawSoon() {
  clearTimeout(redrawTimer);
  redrawTimer = setTimeout(() => drawScalars(), 150);
}

export async function refreshCollections() {
  const answer = await get('/api/tensors', { trial: chosenTrials(), regex: '^$' });
  const select = $('sc-collection');
  const current = select.value;
  select.replaceChildren(new Option('(any)', ''));
  for (const c of answer.collections) select.append(new Option(c, c));
  select.value = answer.collections.includes(current) ? current : '';
  return answer.collections;
}

// Shows one tensor of one trial around a step (a finding's link).
export function showTensorAt(tensorRegex, step, span) {
  $('sc-tensor').value = tensorRegex;
  $('sc-collection').value = '';
  scalars.range = [Math.max(0, step - span), step + span];
  scalars.marker = step;
  drawScalars();
}

export function initScalars() {
  for (const id of ['sc-collection', 'sc-reduction', 'sc-abs', 'sc-train', 'sc-eval', 'sc-other', 'sc-log'])
    $(id).addEventListener('change', redrawSoon);
  $('sc-tensor').addEventListener('input', () => { scalars.marker = null; redrawSoon(); });
  $('sc-smoothing').addEventListener('input', () => {
    $('sc-smoothing-value').textContent = $('sc-smoothing').value;
    redrawSoon();
  });
  $('sc-reset').addEventListener('click', () => { scalars.range = null; scalars.marker = null; drawScalars(); });
  $('sc-chart').addEventListener('dblclick', () => { scalars.range = null; drawScalars(); });
}
