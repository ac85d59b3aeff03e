// An app's tasks (bulk replay, cancel or skip of many deliveries, run by the
// server in the background): a form that counts what a task would select (a
// dry run) before it may start one, and the app's tasks with their progress,
// each cancellable while queued or running. The list follows itself while a
// task is queued or running and stops asking once none is.

import { api, seg, items } from './api.js';
import { el, replace, field, setFieldError, button, message, badge, table, row, timeEl, localToIso } from './dom.js';

/** The statuses each kind selects (the API's default: all of them). */
const KIND_STATUSES = {
  replay: ['failed', 'skipped'],
  cancel: ['scheduled', 'pending'],
  skip: ['scheduled', 'pending'],
};
/** What the kind does, under its choice. */
const KIND_HINT = {
  replay: 'Sends failed or skipped deliveries again, with their original event id and a fresh attempt budget.',
  cancel: 'Stops deliveries not sent yet: they become skipped (reason cancelled) and stay replayable.',
  skip: 'The same as cancel.',
};
/** A selection without statuses: what the API then selects. */
const KIND_DEFAULT = { replay: 'failed, skipped', cancel: 'not sent yet', skip: 'not sent yet' };
/** What the kind does, for "N deliveries would be …". */
const KIND_VERB = { replay: 'replayed', cancel: 'cancelled', skip: 'skipped' };
const ACTIVE = ['queued', 'running'];
/** How often the list asks again while a task is queued or running. */
const POLL_MS = 1000;
/** After an error, while tasks were active. */
const RETRY_MS = 5000;
const LIST_LIMIT = 20;

const tasksPath = (ctx) => `/v1/apps/${seg(ctx.app)}/tasks`;
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/**
 * The Tasks section of the delivery log: `endpoints` are the app's endpoints
 * (for the form's endpoint choice and the list's selection summaries).
 */
export function tasksSection(ctx, endpoints) {
  const urlOf = new Map(endpoints.map((e) => [e.id, e.url]));
  const section = el('section', { class: 'card tasks', testid: 'tasks-section', 'aria-labelledby': 'tasks-title' },
    el('h2', { id: 'tasks-title' }, 'Tasks'),
    el('p', { class: 'hint' }, 'Bulk replays, cancels and skips of this app\'s deliveries. Fenix selects the deliveries when the task starts and works through them in the background, at a bounded rate.'));
  const list = taskList(ctx, urlOf);
  if (ctx.canManage) section.append(taskForm(ctx, endpoints, () => list.reload()));
  section.append(list.node);
  list.reload();
  return section;
}

/** The form: kind and selection, Count (the dry run), then Start. */
function taskForm(ctx, endpoints, started) {
  const kind = field('Kind', el('select', {},
    el('option', { value: 'replay' }, 'replay'),
    el('option', { value: 'cancel' }, 'cancel'),
    el('option', { value: 'skip' }, 'skip')), { hint: KIND_HINT.replay, testid: 'task-kind' });
  // Checkboxes, so a fieldset with its legend rather than one labelled input.
  const statusBox = el('div', { class: 'check-row' });
  const statusError = el('p', { class: 'field-error', role: 'alert', testid: 'task-statuses-error' });
  const statuses = { input: statusBox, error: statusError,
    wrap: el('fieldset', { class: 'field check-group', testid: 'task-statuses' }, el('legend', {}, 'Statuses'), statusBox, statusError) };
  const endpoint = field('Endpoint', el('select', {},
    el('option', { value: '' }, 'any endpoint'),
    endpoints.map((e) => el('option', { value: e.id }, e.url))), { testid: 'task-endpoint' });
  const since = field('Created from', el('input', { type: 'datetime-local' }), { testid: 'task-since' });
  const until = field('Created before', el('input', { type: 'datetime-local' }), { testid: 'task-until' });
  const eventTypes = field('Event types', el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: 'invoice.paid, booking.confirmed' }), {
    hint: 'Separated by commas; empty means every type.', testid: 'task-event-types' });
  const statusClass = field('Last answer', el('select', {},
    el('option', { value: '' }, 'any'),
    el('option', { value: '4xx' }, '4xx: the receiver refused'),
    el('option', { value: '5xx' }, '5xx: the receiver failed'),
    el('option', { value: 'network' }, 'no answer (network, TLS, time-out)')), {
    hint: 'The class of the latest attempt.', testid: 'task-status-class' });
  const fields = { kind, statuses, endpoint_id: endpoint, since, until, event_types: eventTypes, last_status_class: statusClass };

  const drawStatuses = () => {
    replace(statusBox, KIND_STATUSES[kind.input.value].map((s) => el('label', { class: 'check' },
      el('input', { type: 'checkbox', value: s, testid: 'task-status', 'data-status': s, props: { checked: true } }), s)));
  };
  drawStatuses();
  kind.input.addEventListener('change', () => {
    drawStatuses();
    kind.wrap.querySelector('.hint').textContent = KIND_HINT[kind.input.value];
  });

  const result = el('div', { testid: 'task-count-result', 'aria-live': 'polite' });
  const formError = el('div', { testid: 'task-form-error' });
  // Start needs a count of exactly what the form now says: any change asks for a new one.
  let counted = null;
  const count = button('Count', null, { testid: 'task-count' });
  const start = button('Start', null, { kind: 'primary', testid: 'task-start', disabled: true });
  const startHint = el('p', { class: 'hint', testid: 'task-start-hint' }, 'Count first: Start creates the task once you have seen how many deliveries it would select.');

  const body = () => {
    const filter = {};
    if (endpoint.input.value) filter.endpoint_id = endpoint.input.value;
    const s = localToIso(since.input.value);
    if (s) filter.since = s;
    const u = localToIso(until.input.value);
    if (u) filter.until = u;
    // Every box ticked is the API's default, which for cancel and skip also takes
    // in-flight deliveries whose request has not started: then send none.
    const ticked = [...statusBox.querySelectorAll('input:checked')].map((i) => i.value);
    if (ticked.length !== KIND_STATUSES[kind.input.value].length) filter.statuses = ticked;
    const types = eventTypes.input.value.split(/[\s,]+/).filter(Boolean);
    if (types.length) filter.event_types = types;
    if (statusClass.input.value) filter.last_status_class = statusClass.input.value;
    return { kind: kind.input.value, filter };
  };
  const clear = () => {
    for (const f of Object.values(fields)) setFieldError(f, '');
    formError.replaceChildren();
  };
  const forget = () => {
    // A count shown for other values than the form's now is no answer any more.
    if (counted) result.replaceChildren();
    counted = null;
    start.disabled = true;
    startHint.hidden = false;
  };
  const refused = (err) => {
    if (err.status === 401) return;
    const f = fields[fieldOf(err)];
    if (f) {
      setFieldError(f, err.message);
      (f.input.matches('input, select, textarea') ? f.input : f.input.querySelector('input')).focus();
    } else {
      replace(formError, message(err.message, 'error'));
    }
  };

  count.addEventListener('click', async () => {
    clear();
    forget();
    const b = body();
    count.disabled = true;
    replace(result, el('p', { class: 'muted' }, 'Counting…'));
    try {
      const answer = await api('POST', tasksPath(ctx), { ...b, dry_run: true });
      if (!ctx.alive()) return;
      const n = answer.count;
      replace(result, el('p', { class: `msg ${n ? 'msg-info' : 'msg-warn'}`, role: 'status', testid: 'task-count-text', 'data-count': String(n) },
        `${plural(n, 'delivery', 'deliveries')} would be ${KIND_VERB[b.kind]}.`, n ? null : ' Nothing to start.'));
      counted = { key: JSON.stringify(b), n };
      start.disabled = n === 0;
      startHint.hidden = n > 0;
    } catch (err) {
      result.replaceChildren();
      refused(err);
    } finally {
      count.disabled = false;
    }
  });

  start.addEventListener('click', async () => {
    const b = body();
    if (!counted || counted.key !== JSON.stringify(b) || counted.n === 0) return forget();
    clear();
    start.disabled = true;
    try {
      const task = await api('POST', tasksPath(ctx), b);
      if (!ctx.alive()) return;
      forget();
      startHint.hidden = true;
      replace(result, el('p', { class: 'msg msg-ok', role: 'status', testid: 'task-started', 'data-id': task.id },
        `Task ${task.id} started: ${plural(task.selected, 'delivery', 'deliveries')} selected, to be ${KIND_VERB[task.kind]}.`));
      started();
    } catch (err) {
      start.disabled = false;
      refused(err);
    }
  });

  const form = el('form', { class: 'task-form', testid: 'task-form', 'aria-label': 'Start a task',
    on: { submit: (e) => { e.preventDefault(); count.click(); }, input: forget, change: forget } },
  el('h3', {}, 'Start a task'),
  el('div', { class: 'filters' }, kind.wrap, statuses.wrap, endpoint.wrap, statusClass.wrap, eventTypes.wrap, since.wrap, until.wrap),
  el('div', { class: 'row-actions' }, count, start), startHint, result, formError);
  return form;
}

/** Which form field an API refusal is about (`filter.since: …` names it), or null. */
function fieldOf(err) {
  if (err.code === 'invalid_statuses') return 'statuses';
  if (err.code === 'endpoint_not_found') return 'endpoint_id';
  if (err.code === 'invalid_task_kind') return 'kind';
  const m = err.code === 'invalid_task_filter' ? /^filter\.([a-z_]+):/.exec(err.message) : null;
  return m ? m[1] : null;
}

/** The app's tasks, newest first, following themselves while one is active. */
function taskList(ctx, urlOf) {
  // What a cancel did, apart from why the list could not be read (cleared by the next read).
  const status = el('div', { testid: 'tasks-status', 'aria-live': 'polite' });
  const readError = el('div', { 'aria-live': 'polite' });
  const body = el('div', { testid: 'tasks-list' });
  const node = el('div', {}, el('h3', {}, 'This app\'s tasks'), status, readError, body);
  const headers = ['Task', 'Kind', 'Selection', 'State', 'Progress', 'Rate', 'Created', 'Started', 'Finished', ''];
  const rows = new Map();
  let tbody = null;
  let timer = null;
  let seq = 0;

  async function reload() {
    clearTimeout(timer);
    timer = null;
    const mine = ++seq;
    let page;
    try {
      page = await api('GET', `${tasksPath(ctx)}?limit=${LIST_LIMIT}`);
    } catch (err) {
      if (mine !== seq || !ctx.alive() || err.status === 401) return;
      replace(readError, message(`The tasks could not be read: ${err.message}`, 'error', 'tasks-error'));
      if ([...rows.values()].some((r) => ACTIVE.includes(r.state))) timer = setTimeout(tick, RETRY_MS);
      return;
    }
    // A newer reload (after a start or a cancel) draws instead.
    if (mine !== seq || !ctx.alive()) return;
    readError.replaceChildren();
    const tasks = items(page);
    draw(tasks, page.next_cursor);
    if (tasks.some((t) => ACTIVE.includes(t.state))) timer = setTimeout(tick, POLL_MS);
  }
  const tick = () => {
    if (ctx.alive()) reload();
  };

  function draw(tasks, more) {
    if (tasks.length === 0) {
      rows.clear();
      tbody = null;
      replace(body, el('p', { class: 'muted', testid: 'tasks-empty' }, 'No task yet.'));
      return;
    }
    if (!tbody) {
      const wrap = table(headers, [], 'tasks-table');
      tbody = wrap.querySelector('tbody');
      replace(body, wrap, el('p', { class: 'hint', testid: 'tasks-more', hidden: true }, `The ${LIST_LIMIT} newest tasks are shown.`));
    }
    body.querySelector('[data-testid=tasks-more]').hidden = !more;
    // Rows are kept and updated in place, so a button keeps its focus while the list follows.
    const seen = new Set();
    const order = tasks.map((t) => {
      seen.add(t.id);
      let r = rows.get(t.id);
      if (!r) {
        r = taskRow(ctx, headers, urlOf, cancel);
        rows.set(t.id, r);
      }
      r.update(t);
      return r.tr;
    });
    for (const [id, r] of rows) if (!seen.has(id)) { r.tr.remove(); rows.delete(id); }
    order.forEach((tr, i) => { if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null); });
  }

  async function cancel(task, btn) {
    btn.disabled = true;
    try {
      await api('POST', `${tasksPath(ctx)}/${seg(task.id)}/cancel`);
      if (!ctx.alive()) return;
      replace(status, message(`Task ${task.id} cancelled: what it did before stays done.`, 'ok', 'task-cancelled'));
    } catch (err) {
      if (err.status === 401 || !ctx.alive()) return;
      replace(status, message(err.code === 'task_ended' ? `Task ${task.id} had ended already (${err.message}).` : err.message, 'error', 'tasks-error'));
    }
    await reload();
    btn.disabled = false;
  }

  return { node, reload };
}

/** One task's row: built once, then `update(task)` redraws its cells. */
function taskRow(ctx, headers, urlOf, cancel) {
  const cells = headers.map(() => el('span'));
  const tr = row(headers, cells, { testid: 'task-row' });
  const bar = el('progress', { class: 'task-bar', testid: 'task-progress' });
  const barText = el('span', { class: 'task-bar-text', testid: 'task-progress-text' });
  replace(cells[4], el('span', { class: 'task-progress' }, bar, barText));
  let current = null;
  const cancelBtn = button('Cancel task', () => cancel(current, cancelBtn), { kind: 'danger', testid: 'task-cancel' });
  const r = {
    tr,
    state: null,
    update(t) {
      current = t;
      r.state = t.state;
      tr.dataset.id = t.id;
      tr.dataset.state = t.state;
      replace(cells[0], el('code', { testid: 'task-id' }, t.id));
      replace(cells[1], el('span', { class: 'nowrap', testid: 'task-kind-shown' }, t.kind));
      replace(cells[2], el('span', { class: 'muted', testid: 'task-selection' }, selection(t.kind, t.filter, urlOf)));
      replace(cells[3], badge(t.state, 'task-state'));
      const handled = t.done + t.failed;
      // A task that selected nothing has nothing left once it ends.
      const max = Math.max(t.selected, 1);
      bar.max = max;
      bar.value = t.selected === 0 ? (ACTIVE.includes(t.state) ? 0 : 1) : Math.min(handled, max);
      bar.dataset.done = String(handled);
      bar.dataset.selected = String(t.selected);
      bar.setAttribute('aria-label', `${handled} of ${t.selected} deliveries handled`);
      barText.textContent = `${handled} of ${t.selected}${t.failed ? ` (${t.failed} left as they were)` : ''}`;
      replace(cells[5], el('span', { testid: 'task-rate' }, `${t.rate_per_s}/s at most`));
      replace(cells[6], timeEl(t.created_at));
      replace(cells[7], timeEl(t.started_at));
      replace(cells[8], timeEl(t.finished_at));
      const cancellable = ctx.canManage && ACTIVE.includes(t.state);
      if (cancellable && !cells[9].contains(cancelBtn)) replace(cells[9], cancelBtn);
      if (!cancellable) cells[9].replaceChildren();
    },
  };
  return r;
}

/** A task's filter in a few words: statuses, last answer, endpoint URL, types, window. */
function selection(kind, f, urlOf) {
  if (!f || typeof f !== 'object') return '—';
  const parts = [Array.isArray(f.statuses) ? f.statuses.join(', ') : KIND_DEFAULT[kind] || 'every status the kind acts on'];
  if (f.last_status_class) parts.push(`last answer ${f.last_status_class}`);
  if (f.endpoint_id) parts.push(urlOf.get(f.endpoint_id) || f.endpoint_id);
  if (Array.isArray(f.event_types) && f.event_types.length) parts.push(f.event_types.join(', '));
  if (f.since) parts.push(`from ${new Date(f.since).toLocaleString()}`);
  if (f.until) parts.push(`before ${new Date(f.until).toLocaleString()}`);
  return parts.join(' · ');
}
