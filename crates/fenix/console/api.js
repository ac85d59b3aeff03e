// The console's one way to the server: same-origin fetches with the session
// cookie, the CSRF token on every state change, errors in the API's shape.

let csrfToken = null;
let sessionLost = null;

/** An error answer: HTTP status, the API's stable `code` and its message; `detail` is the whole `error` object (a filter's position, say). */
export class ApiError extends Error {
  constructor(status, code, message, detail = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.detail = detail;
  }
}

/** Set from `GET /console/api/session`; sent as `X-Fenix-CSRF` on state changes. */
export function setCsrf(token) {
  csrfToken = token || null;
}

/** Called once when a `/v1` call answers 401 (the session ended mid-use). */
export function onSessionLost(fn) {
  sessionLost = fn;
}

/** Percent-encodes one path segment. */
export const seg = encodeURIComponent;

/** `{a: 1, b: ''}` → `?a=1` (empty values left out), or '' when nothing is left. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Calls Fenix; resolves to the JSON body (null when empty), rejects with ApiError. */
export async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (!['GET', 'HEAD', 'OPTIONS'].includes(method) && csrfToken) headers['X-Fenix-CSRF'] = csrfToken;
  let resp;
  try {
    resp = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
      redirect: 'error',
    });
  } catch (e) {
    throw new ApiError(0, 'network_error', 'Fenix could not be reached. Check the connection and try again.');
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!resp.ok) {
    const code = data && data.error && data.error.code ? data.error.code : `http_${resp.status}`;
    const msg = data && data.error && data.error.message ? data.error.message : `Fenix answered ${resp.status}.`;
    const err = new ApiError(resp.status, code, msg, data && data.error && typeof data.error === 'object' ? data.error : null);
    if (resp.status === 401 && path.startsWith('/v1/') && sessionLost) sessionLost(err);
    throw err;
  }
  return data;
}

/** A list answer's items, whether it is a page `{data, next_cursor}` or a bare array. */
export function items(answer) {
  if (Array.isArray(answer)) return answer;
  return answer && Array.isArray(answer.data) ? answer.data : [];
}
