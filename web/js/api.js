// The server's JSON endpoints (docs/SERVE.md), the bearer token the URL may carry, and the
// page-wide notices (locked database, errors).

// A token given as #token=T in the URL is kept for this tab and removed from the address bar.
const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
if (fromHash) {
  sessionStorage.setItem('trialdb-token', fromHash);
  history.replaceState(null, '', location.pathname);
}
const token = sessionStorage.getItem('trialdb-token');

// Listeners of 'locked' (detail: true/false) and 'error' (detail: message).
export const notices = new EventTarget();

// GET path?params; params values may be arrays (repeated keys). Resolves to the JSON; rejects
// with an Error carrying the server's message.
export async function get(path, params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    for (const v of Array.isArray(value) ? value : [value]) query.append(key, String(v));
  }
  const headers = token ? { Authorization: 'Bearer ' + token } : {};
  const qs = query.toString();
  const response = await fetch(path + (qs ? '?' + qs : ''), { headers });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (response.status === 503 && body.locked) notices.dispatchEvent(new CustomEvent('locked', { detail: true }));
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// JSON numbers the server could not write as numbers ("NaN", "Infinity") as numbers again.
export function num(v) {
  return v === null || v === undefined ? null : Number(v);
}
