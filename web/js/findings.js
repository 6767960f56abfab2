// The findings view: a timeline per rule and tensor (one row each, a point per finding) and the
// findings listed by rule and tensor, each linking to the tensor's chart at its step.
import { get, num } from './api.js';
import { lineChart, emptyChart, exactRegex } from './chart.js';
import { chosenTrials } from './trials.js';

const $ = (id) => document.getElementById(id);
// Steps shown each side of a finding when its link opens the tensor's chart.
const kSpanSteps = 50;

export async function drawFindings(openTensor) {
  const trials = chosenTrials();
  const answer = trials.length ? await get('/api/findings', { trial: trials }) : { rules_run: true, findings: [] };
  const list = $('fi-list');
  list.replaceChildren();
  if (!answer.rules_run) {
    emptyChart($('fi-chart'), 'No rules were run on this database yet (trialdb rules --db FILE).');
    $('fi-summary').textContent = '';
    return;
  }
  const groups = new Map();   // "rule · tensor · trial" -> findings
  for (const f of answer.findings) {
    const key = `${f.rule} · ${f.tensor} · ${f.trial}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(f);
  }
  $('fi-summary').textContent = `${answer.findings.length} finding${answer.findings.length === 1 ? '' : 's'} in ${groups.size} rule and tensor pair${groups.size === 1 ? '' : 's'}` +
    (answer.cut ? ' (more were found than are shown)' : '');
  if (!groups.size) {
    emptyChart($('fi-chart'), 'No findings for the chosen trials.');
    return;
  }
  const lines = [...groups.entries()].map(([key, fs], row) => ({
    label: key, xs: fs.map((f) => f.step), ys: fs.map(() => groups.size - row), points: true, paths: () => null,
  }));
  // One x axis for all rows: uPlot joins them; each row keeps its own y.
  lineChart($('fi-chart'), lines.map((l) => ({ ...l, xs: [...new Set(l.xs)], ys: [...new Set(l.xs)].map(() => l.ys[0]) })),
    { height: Math.min(500, 120 + 22 * groups.size), legend: groups.size <= 40 });
  for (const [key, fs] of groups) {
    const div = document.createElement('div');
    div.className = 'group';
    const h = document.createElement('h3');
    h.textContent = key;
    div.append(h);
    for (const f of fs) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = `step ${f.step}`;
      b.title = f.message || '';
      b.addEventListener('click', () => openTensor(f.trial, exactRegex(f.tensor), f.step, kSpanSteps));
      const m = document.createElement('span');
      m.className = 'message';
      m.textContent = f.message ? `${f.message}${f.value !== null ? ` (value ${num(f.value)})` : ''}` : '';
      const line = document.createElement('div');
      line.append(b, m);
      div.append(line);
    }
    list.append(div);
  }
}
