// The trial list: each trial with its steps per mode, workers, whether it ended and its newest
// findings; checkboxes choose the trials the views overlay.
import { get } from './api.js';

// The trials as last fetched, and the names chosen (null: every trial, new ones included).
export const trials = { list: [], chosen: null };

export function chosenTrials() {
  return trials.chosen === null ? trials.list.map((t) => t.trial) : trials.list.map((t) => t.trial).filter((n) => trials.chosen.has(n));
}

function text(tag, className, content) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  e.textContent = content;
  return e;
}

function describe(t) {
  const modes = Object.entries(t.modes).map(([mode, m]) => `${mode} ${m.steps}`).join(' · ') || 'no complete step yet';
  const workers = `${t.workers} worker${t.workers === 1 ? '' : 's'}`;
  const state = t.ended ? 'ended' : 'running (or stopped)';
  const findings = t.findings ? ` · ${t.findings} finding${t.findings === 1 ? '' : 's'}` : '';
  return `${modes} · ${workers} · ${state}${findings}`;
}

// Fetches and draws the list; onChange() runs when the choice changes.
export async function refreshTrials(onChange) {
  trials.list = await get('/api/trials');
  const ul = document.getElementById('trial-list');
  ul.replaceChildren();
  for (const t of trials.list) {
    const li = document.createElement('li');
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = trials.chosen === null || trials.chosen.has(t.trial);
    box.dataset.trial = t.trial;
    box.addEventListener('change', () => {
      if (trials.chosen === null) trials.chosen = new Set(trials.list.map((x) => x.trial));
      if (box.checked) trials.chosen.add(t.trial);
      else trials.chosen.delete(t.trial);
      onChange();
    });
    label.append(box, text('span', 'name', t.trial));
    li.append(label, text('div', 'detail', describe(t)));
    for (const f of t.newest_findings)
      li.append(text('div', 'finding', `${f.rule} at step ${f.step}: ${f.tensor}`));
    ul.append(li);
  }
  if (!trials.list.length) ul.append(text('li', 'detail', 'no trials in the database yet'));
}

export function chooseAll(all, onChange) {
  trials.chosen = all ? null : new Set();
  for (const box of document.querySelectorAll('#trial-list input[type=checkbox]')) box.checked = all;
  onChange();
}
