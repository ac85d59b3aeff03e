// Small DOM helpers. Every text goes in through text nodes (`textContent`), so
// markup in a payload, a description or a URL is shown as text and never runs.

/**
 * Builds an element. `attrs`: `class`, `testid` (→ data-testid), `text`,
 * `on` ({event: handler}), `props` (DOM properties such as `value`, `checked`),
 * anything else as an attribute. Children: nodes, strings (as text), or null.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'testid') node.dataset.testid = value;
    else if (key === 'text') node.textContent = String(value);
    else if (key === 'on') for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
    else if (key === 'props') Object.assign(node, value);
    else if (key.startsWith('on') || key === 'style') throw new Error(`refusing attribute ${key}`);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

/** Appends children (nodes, strings as text, arrays, nulls skipped). */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** An SVG element (for the health chart); attributes only, no style. */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'class') node.setAttribute('class', value);
    else if (key === 'testid') node.setAttribute('data-testid', value);
    else if (key === 'text') node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

/** Replaces a node's children. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** `2026-11-29T21:04:19.123Z` → local, readable time; `—` for null. */
export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** A `<time>` element with the local time as text and the exact time as its datetime. */
export function timeEl(iso) {
  return el('time', { datetime: iso || undefined, title: iso || undefined }, fmtTime(iso));
}

/** A status or state as a coloured badge (by class). */
export function badge(value, testid) {
  return el('span', { class: `badge badge-${String(value).replace(/[^a-z_]/g, '')}`, testid }, String(value));
}

/**
 * A labelled form field: returns {wrap, input, error}. `error` is where an API
 * error about this field is shown in words (aria-describedby points at it).
 */
let fieldSeq = 0;
export function field(label, input, { hint, testid } = {}) {
  const id = `f${++fieldSeq}`;
  input.id = id;
  const error = el('p', { class: 'field-error', id: `${id}-err`, testid: testid ? `${testid}-error` : undefined, role: 'alert' });
  const hintEl = hint ? el('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  input.setAttribute('aria-describedby', [hintEl ? `${id}-hint` : null, `${id}-err`].filter(Boolean).join(' '));
  if (testid) input.dataset.testid = testid;
  const wrap = el('div', { class: 'field' }, el('label', { for: id }, label), input, hintEl, error);
  return { wrap, input, error };
}

/** Shows `message` under a field (and marks it invalid), or clears it. */
export function setFieldError(f, message) {
  f.error.textContent = message || '';
  if (message) f.input.setAttribute('aria-invalid', 'true');
  else f.input.removeAttribute('aria-invalid');
}

/** A button; `kind` adds a class (primary, danger, plain). */
export function button(label, onClick, { kind = '', testid, type = 'button', disabled } = {}) {
  return el('button', { type, class: `btn ${kind}`.trim(), testid, disabled, on: onClick ? { click: onClick } : undefined }, label);
}

/** A message line (error or success) with role=status/alert. */
export function message(text, kind = 'info', testid) {
  return el('p', { class: `msg msg-${kind}`, role: kind === 'error' ? 'alert' : 'status', testid }, text);
}

/**
 * A secret shown once: its text, a copy button and a "done" button that
 * removes it from the page. Test ids: `${testid}` (the text itself),
 * `${testid}-copy`, `${testid}-copied`, `${testid}-done`, `${testid}-box`.
 */
export function secretBox(title, secret, testid = 'secret') {
  const value = el('code', { class: 'secret', testid }, secret);
  const status = el('span', { class: 'copy-status', role: 'status', testid: `${testid}-copied` });
  const copy = button('Copy', async () => {
    let ok = false;
    try {
      await navigator.clipboard.writeText(secret);
      ok = true;
    } catch {
      // Without the clipboard API (an insecure origin): select the text, let the browser copy it.
      const range = document.createRange();
      range.selectNodeContents(value);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      try { ok = document.execCommand('copy'); } catch { ok = false; }
    }
    status.textContent = ok ? 'Copied.' : 'Selected: copy it with your keyboard.';
  }, { testid: `${testid}-copy` });
  const box = el('div', { class: 'secret-box', testid: `${testid}-box`, role: 'region', 'aria-label': title },
    el('p', { class: 'secret-title' }, title),
    el('div', { class: 'secret-row' }, value, copy, status),
    el('p', { class: 'hint' }, 'Shown once: store it now. No later page shows it again.'),
    button('Done, I stored it', () => box.remove(), { testid: `${testid}-done` }));
  return box;
}

/**
 * An inline confirmation in place of a dialog: replaces `slot`'s content with
 * the question (and `extra` options), "confirm-ok" and "confirm-cancel";
 * focuses cancel (or the first option) and gives the focus back to `opener`
 * when cancelled.
 */
export function confirmInline(slot, question, confirmLabel, onConfirm, { opener, testid = 'confirm', extra = null } = {}) {
  const cancel = button('Cancel', () => {
    slot.replaceChildren();
    if (opener) opener.focus();
  }, { testid: 'confirm-cancel' });
  const yes = button(confirmLabel, async () => {
    yes.disabled = true;
    try { await onConfirm(); } finally { yes.disabled = false; }
  }, { kind: extra ? 'primary' : 'danger', testid: 'confirm-ok' });
  const onKey = (e) => { if (e.key === 'Escape') cancel.click(); };
  replace(slot, el('div', { class: 'confirm', role: 'group', 'aria-label': question, testid, on: { keydown: onKey } }, el('p', {}, question), extra, yes, cancel));
  (extra ? extra.querySelector('input') || yes : cancel).focus();
}

/** A table from headers and rows of cells (nodes or text). */
export function table(headers, rows, testid) {
  return el('div', { class: 'table-wrap' },
    el('table', { testid },
      el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows)));
}

/** A table row; `cells` are nodes or text, each labelled for the phone layout. */
export function row(headers, cells, attrs = {}) {
  return el('tr', attrs, cells.map((c, i) => el('td', { 'data-label': headers[i] }, c)));
}

/** `datetime-local` value → RFC 3339 (UTC), or undefined when empty. */
export function localToIso(value) {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** RFC 3339 → a `datetime-local` value in local time. */
export function isoToLocal(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
