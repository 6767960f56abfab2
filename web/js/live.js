// Live updates: the page polls /api/status every second; when what the views show has changed
// (an ingest --follow or a rule run committed) the current view fetches again, keeping the
// chosen range; while a one-shot ingest holds the write lock the banner says so.
import { get, notices } from './api.js';

const kPollMs = 1000;
let last = null;

function banner(message) {
  const b = document.getElementById('banner');
  b.textContent = message || '';
  b.hidden = !message;
}

export function startLive(onChange) {
  notices.addEventListener('locked', () => banner(lockedMessage));
  const tick = async () => {
    try {
      const s = await get('/api/status');
      if (s.locked) {
        banner(lockedMessage);
      } else {
        banner('');
        if (last !== null && s.fingerprint !== last) await onChange();
        last = s.fingerprint;
        document.getElementById('live-state').textContent = 'live · checked ' + new Date().toLocaleTimeString();
      }
    } catch (e) {
      document.getElementById('live-state').textContent = 'server not answering: ' + e.message;
    }
    setTimeout(tick, kPollMs);
  };
  tick();
}

const lockedMessage = 'An ingest is writing the database and holds its lock: the view shows what was there before and catches up once it commits.';
