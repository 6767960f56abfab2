// The SQL box: one read-only statement (the server refuses anything else and limits its time
// and rows), the result as a table and, when it has a step column and numbers, as a chart; the
// same query as a command for the sqlite3 shell.
import { get, num } from './api.js';
import { lineChart, emptyChart } from './chart.js';

const $ = (id) => document.getElementById(id);
const kMaxSeries = 40;
let info = { databases: [], extension: null };

export function setInfo(i) { info = i; }

function isNumber(v) { return typeof v === 'number' || (typeof v === 'string' && ['NaN', 'Infinity', '-Infinity'].includes(v)); }

function drawTable(answer) {
  const table = $('sql-table');
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const c of answer.columns) {
    const th = document.createElement('th');
    th.textContent = c;
    head.append(th);
  }
  const body = table.createTBody();
  for (const row of answer.rows) {
    const tr = body.insertRow();
    for (const v of row) {
      const td = tr.insertCell();
      td.textContent = v === null ? 'NULL' : String(v);
      if (isNumber(v)) td.className = 'num';
    }
  }
}

// A chart when a column is named step: one line per numeric column and per combination of the
// text columns (trial, tensor, ...).
function drawChart(answer) {
  const el = $('sql-chart');
  const x = answer.columns.findIndex((c) => c.toLowerCase() === 'step');
  const numeric = answer.columns.map((_, i) => i !== x && answer.rows.some((r) => typeof r[i] === 'number'));
  const text = answer.columns.map((_, i) => i !== x && !numeric[i] && answer.rows.some((r) => typeof r[i] === 'string'));
  if (x < 0 || !numeric.some(Boolean)) {
    el.replaceChildren();
    return;
  }
  const series = new Map();
  for (const r of answer.rows) {
    if (typeof r[x] !== 'number') continue;
    const groupName = answer.columns.map((c, i) => (text[i] ? String(r[i]) : null)).filter((v) => v !== null).join(' · ');
    answer.columns.forEach((c, i) => {
      if (!numeric[i]) return;
      const key = (groupName ? groupName + ' · ' : '') + c;
      if (!series.has(key)) series.set(key, new Map());
      series.get(key).set(r[x], num(r[i]));
    });
  }
  const lines = [...series.entries()].slice(0, kMaxSeries).map(([label, points]) => {
    const xs = [...points.keys()].sort((a, b) => a - b);
    return { label, xs, ys: xs.map((s) => points.get(s)) };
  });
  if (!lines.length) emptyChart(el, '');
  else lineChart(el, lines, { height: 300 });
}

async function run() {
  const q = $('sql-text').value;
  $('sql-summary').textContent = 'running...';
  try {
    const answer = await get('/api/sql', { q });
    $('sql-summary').textContent = `${answer.rows.length} row${answer.rows.length === 1 ? '' : 's'} in ${answer.elapsed_ms.toFixed(1)} ms` +
      (answer.cut ? ` (the first ${answer.row_limit} only)` : '');
    drawTable(answer);
    drawChart(answer);
  } catch (e) {
    $('sql-summary').textContent = 'error: ' + e.message;
    $('sql-table').replaceChildren();
    $('sql-chart').replaceChildren();
  }
}

const shellQuote = (s) => "'" + s.replace(/'/g, "'\\''") + "'";

// The query as a sqlite3 shell command on the served databases, with the extension loaded.
export function sqliteCommand(q) {
  const [main, ...others] = info.databases;
  const parts = ['sqlite3', '-readonly', shellQuote(main || 'trials.db')];
  if (info.extension) parts.push('-cmd', shellQuote('.load ' + info.extension));
  others.forEach((d, i) => parts.push('-cmd', shellQuote(`ATTACH '${d.replace(/'/g, "''")}' AS db${i + 1}`)));
  parts.push(shellQuote(q));
  return parts.join(' ');
}

export function initSql() {
  $('sql-text').value = "SELECT trial, tensor, step, value\nFROM reductions\nWHERE reduction = 'mean' AND abs = 0 AND tensor LIKE '%loss%'\nORDER BY trial, tensor, step";
  $('sql-run').addEventListener('click', run);
  $('sql-text').addEventListener('keydown', (e) => { if (e.key === 'Enter' && e.ctrlKey) run(); });
  $('sql-copy').addEventListener('click', async () => {
    const command = sqliteCommand($('sql-text').value);
    $('sql-command').textContent = command;
    $('sql-command').hidden = false;
    try {
      await navigator.clipboard.writeText(command);
      $('sql-summary').textContent = 'copied: paste it into a terminal';
    } catch {
      $('sql-summary').textContent = 'select the command below to copy it';
    }
  });
}
