// The page: tabs, the trial list and the views; on opening it shows the loss curves of every
// trial (the losses collection, else tensors named like loss).
import { get } from './api.js';
import { refreshTrials, chooseAll, trials } from './trials.js';
import { initScalars, drawScalars, refreshCollections, showTensorAt, scalars } from './scalars.js';
import { initDistributions, refreshDistributionChoices, drawDistribution } from './distributions.js';
import { drawFindings } from './findings.js';
import { initSql, setInfo } from './sql.js';
import { startLive } from './live.js';

const $ = (id) => document.getElementById(id);
let view = 'scalars';

function showError(e) {
  const b = $('banner');
  b.textContent = 'error: ' + e.message;
  b.className = 'error';
  b.hidden = false;
}

async function drawView(live = false) {
  if (view === 'scalars') await drawScalars(live);
  else if (view === 'distributions') { await refreshDistributionChoices(); await drawDistribution(live); }
  else if (view === 'findings') await drawFindings(openTensor);
}

function openTensor(trial, regex, step, span) {
  trials.chosen = new Set([trial]);
  for (const box of document.querySelectorAll('#trial-list input[type=checkbox]')) box.checked = box.dataset.trial === trial;
  switchTo('scalars', false);
  showTensorAt(regex, step, span);
}

function switchTo(name, draw = true) {
  view = name;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.view === name);
  for (const s of document.querySelectorAll('.view')) s.hidden = s.id !== 'view-' + name;
  if (draw) drawView().catch(showError);
}

async function onTrialsChanged() {
  await refreshCollections();
  await drawView();
}

async function start() {
  initScalars();
  initDistributions();
  initSql();
  for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => switchTo(b.dataset.view));
  $('trials-all').addEventListener('click', () => chooseAll(true, () => onTrialsChanged().catch(showError)));
  $('trials-none').addEventListener('click', () => chooseAll(false, () => onTrialsChanged().catch(showError)));
  const [info] = await Promise.all([get('/api/info'), refreshTrials(() => onTrialsChanged().catch(showError))]);
  setInfo(info);
  const collections = await refreshCollections();
  if (collections.includes('losses')) $('sc-collection').value = 'losses';
  else $('sc-tensor').value = '(?i)loss';
  switchTo('scalars');
  startLive(async () => {
    await refreshTrials(() => onTrialsChanged().catch(showError));
    if (scalars.chart || view !== 'scalars') await drawView(true);
    else await drawView();
  });
}

start().catch(showError);
