// Routing on an endpoint's page: its channels, its filter (a CEL expression
// over `type`, `data`, `channels`, `tags`) and its transformation (JavaScript
// `function handler(webhook)`), each edited in place with a **Test** beside it
// that asks the API (`POST …/filters/test`, `POST …/transformations/test`)
// about a sample event, before anything is saved. Read sessions see the
// values only (`routingFacts`). Code and answers are shown as text.

import { api, seg, items } from './api.js';
import { el, replace, field, setFieldError, button, message, table, row } from './dom.js';

/** `a, b  c` → ['a', 'b', 'c'] (channels, tags). */
export function parseList(text) {
  return text.split(/[\s,]+/).map((t) => t.trim()).filter(Boolean);
}

/** Which routing field an API error code is about (on save), or null. */
export function routingFieldFor(code) {
  if (/channel/.test(code)) return 'channels';
  if (/filter/.test(code)) return 'filter';
  if (/transformation/.test(code)) return 'transformation';
  return null;
}

const textOrNull = (input) => (input.value.trim() === '' ? null : input.value);

/**
 * Where an error body (`ApiError.detail`, or a test result) puts the error in
 * the code: {line, column} (1-based) or {offset} (0-based), or null. Reads
 * `details[0]` of the API's error first. Accepts
 * `position` as a number or an object, or `line`/`column`/`offset` beside it.
 */
export function errorPosition(detail) {
  if (!detail || typeof detail !== 'object') return null;
  // The API's error puts the position in its first `details` entry.
  if (Array.isArray(detail.details) && detail.details[0] && typeof detail.details[0] === 'object') {
    const found = errorPosition(detail.details[0]);
    if (found) return found;
  }
  const p = detail.position !== undefined && detail.position !== null ? detail.position : detail;
  if (typeof p === 'number') return { offset: p };
  if (typeof p !== 'object') return null;
  if (Number.isInteger(p.line)) return { line: p.line, column: Number.isInteger(p.column) ? p.column : 1 };
  if (Number.isInteger(p.offset)) return { offset: p.offset };
  if (Number.isInteger(p.column)) return { line: 1, column: p.column };
  return null;
}

/** The line of `source` at `pos` with a caret under the column: `{line, column, excerpt}`. */
function locate(source, pos) {
  const lines = source.split('\n');
  let line = pos.line;
  let column = pos.column;
  if (pos.offset !== undefined) {
    const before = source.slice(0, pos.offset).split('\n');
    line = before.length;
    column = before[before.length - 1].length + 1;
  }
  const text = lines[Math.min(Math.max(line, 1), lines.length) - 1] || '';
  return { line, column, excerpt: `${text}\n${' '.repeat(Math.max(column - 1, 0))}^` };
}

/** An error of a filter or transformation: its message, and where it is when the API says. */
function codeError(source, detail, msg, testid) {
  const pos = errorPosition(detail);
  const where = pos ? locate(source, pos) : null;
  return el('div', { class: 'msg msg-error', role: 'alert', testid, 'data-outcome': 'error',
    'data-line': where ? String(where.line) : undefined, 'data-column': where ? String(where.column) : undefined },
  el('p', { class: 'test-line' }, msg),
  where ? el('p', { class: 'test-line', testid: `${testid}-position` }, `At line ${where.line}, column ${where.column}:`) : null,
  where ? el('pre', { class: 'caret' }, where.excerpt) : null);
}

/**
 * A sample event to test with, guessed once: the endpoint's first exact event
 * type (else the catalogue's first type with an example), with the
 * catalogue's example as its data when there is one.
 */
async function guessSample(types) {
  let type = types.find((t) => !t.includes('*')) || null;
  let example;
  try {
    if (type) {
      example = (await api('GET', `/v1/event-types/${seg(type)}`)).example;
    } else {
      const listed = items(await api('GET', '/v1/event-types?limit=50'));
      const t = listed.find((x) => x.example !== null && x.example !== undefined) || listed[0];
      if (t) ({ name: type, example } = t);
    }
  } catch {
    // Not catalogued (404): a sample without an example.
  }
  return { type: type || 'fenix.test', data: example === null || example === undefined ? {} : example };
}

/**
 * The sample event's inputs (type, JSON data, and channels and tags when
 * `withLists`) and a function that reads them into the API's shape, or
 * shows what is wrong and answers null.
 */
function sampleInputs(prefix, withLists) {
  const type = field('Event type', el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off' }), { testid: `${prefix}-type` });
  const data = field('Data (JSON)', el('textarea', { class: 'code', rows: '5', spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off' }), { testid: `${prefix}-data` });
  const channels = withLists ? field('Channels of the event', el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off' }), { testid: `${prefix}-channels`, hint: 'Separated by commas.' }) : null;
  const tags = withLists ? field('Tags of the event', el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off' }), { testid: `${prefix}-tags`, hint: 'Separated by commas.' }) : null;
  const read = () => {
    for (const f of [type, data, channels, tags]) if (f) setFieldError(f, '');
    let parsed;
    try {
      parsed = JSON.parse(data.input.value);
    } catch (e) {
      setFieldError(data, `Not valid JSON: ${e.message}`);
      data.input.focus();
      return null;
    }
    const event = { type: type.input.value.trim(), data: parsed };
    if (withLists) {
      event.channels = parseList(channels.input.value);
      event.tags = parseList(tags.input.value);
    }
    return event;
  };
  return { fields: [type, data, channels, tags].filter(Boolean), type, data, channels, read };
}

/**
 * A Test button and its panel (closed until asked): the sample's inputs, a
 * run button and the result. `prefill(sample)` fills the inputs on the first
 * opening; `runTest(sample, result)` asks the API and shows the answer.
 * Enter in the panel runs the test (it does not submit the endpoint's form).
 */
function testPanel(prefix, label, inputs, prefill, runTest) {
  const result = el('div', { testid: `${prefix}-result`, 'aria-live': 'polite' });
  const run = button('Run the test', null, { testid: `${prefix}-run` });
  const panel = el('div', { class: 'test-panel', testid: `${prefix}-panel`, role: 'group', 'aria-label': label, hidden: true,
    on: { keydown: (e) => {
      if (e.key === 'Enter' && e.target.tagName === 'INPUT') { e.preventDefault(); run.click(); }
      if (e.key === 'Escape') { e.preventDefault(); close(); }
    } } },
  el('p', { class: 'test-title' }, label), inputs.fields.map((f) => f.wrap), el('div', { class: 'row-actions' }, run), result);
  let filled = false;
  const open = button('Test', async () => {
    if (!panel.hidden) return close();
    panel.hidden = false;
    open.setAttribute('aria-expanded', 'true');
    if (!filled) {
      filled = true;
      await prefill();
    }
    inputs.type.input.focus();
  }, { testid: prefix });
  open.setAttribute('aria-expanded', 'false');
  function close() {
    panel.hidden = true;
    open.setAttribute('aria-expanded', 'false');
    open.focus();
  }
  run.addEventListener('click', async () => {
    const sample = inputs.read();
    if (!sample) return;
    run.disabled = true;
    replace(result, el('p', { class: 'muted' }, 'Testing…'));
    try {
      await runTest(sample, result);
    } catch (err) {
      if (err.status !== 401) replace(result, message(err.message, 'error'));
    } finally {
      run.disabled = false;
    }
  });
  return { open, panel };
}

/** The filter's verdict on the sample: matched, not matched, or its error. */
async function runFilterTest(ctx, filter, sample, result) {
  const source = filter.input.value;
  if (source.trim() === '') {
    replace(result, el('p', { class: 'msg msg-info', role: 'status', 'data-outcome': 'no_filter', testid: 'filter-test-outcome' },
      'No filter: every event of the endpoint\'s types and channels passes.'));
    return;
  }
  let answer;
  try {
    answer = await api('POST', `/v1/apps/${seg(ctx.app)}/filters/test`, { filter: source, events: [sample] });
  } catch (err) {
    if (err.status !== 422) throw err;
    replace(result, codeError(source, err.detail, err.message, 'filter-test-outcome'));
    return;
  }
  const r = (answer && answer.results && answer.results[0]) || {};
  if (r.error) {
    replace(result, codeError(source, r, `Error on this event: ${r.error}`, 'filter-test-outcome'));
  } else if (r.matched) {
    replace(result, el('p', { class: 'msg msg-ok', role: 'status', 'data-outcome': 'matched', testid: 'filter-test-outcome' },
      'Matched: the filter lets this event through to the endpoint.'));
  } else {
    replace(result, el('p', { class: 'msg msg-warn', role: 'status', 'data-outcome': 'not_matched', testid: 'filter-test-outcome' },
      'Not matched: the filter keeps this event from the endpoint.'));
  }
}

const pretty = (v) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** What the transformation makes of the sample: the request Fenix would send, a cancel, or its error. */
async function runTransformationTest(ctx, transformation, endpointId, sample, result) {
  const source = transformation.input.value;
  if (source.trim() === '') {
    replace(result, el('p', { class: 'msg msg-info', role: 'status', 'data-outcome': 'no_transformation', testid: 'transformation-test-outcome' },
      'No transformation: the event is sent as it is.'));
    return;
  }
  const body = { transformation: source, event: { type: sample.type, data: sample.data } };
  if (endpointId) body.endpoint_id = endpointId;
  let r;
  try {
    r = await api('POST', `/v1/apps/${seg(ctx.app)}/transformations/test`, body);
  } catch (err) {
    if (err.status !== 422) throw err;
    const what = err.code === 'transformation_failed' ? 'The transformation failed on this event' : 'The transformation is not valid';
    replace(result, codeError(source, err.detail, `${what}: ${err.message}`, 'transformation-test-outcome'));
    return;
  }
  if (r.cancel) {
    replace(result, el('p', { class: 'msg msg-warn', role: 'status', 'data-outcome': 'cancelled', testid: 'transformation-test-outcome' },
      'Cancelled: for this event the transformation sets cancel, so Fenix would send nothing (the delivery is skipped, reason transformation_cancelled).'));
    return;
  }
  const headers = Object.entries(r.headers || {});
  const heads = ['Header', 'Value'];
  replace(result,
    el('div', { class: 'msg msg-ok', role: 'status', 'data-outcome': 'transformed', testid: 'transformation-test-outcome' }, 'The request Fenix would send:'),
    el('dl', { class: 'facts' },
      el('dt', {}, 'Method'), el('dd', { class: 'mono', testid: 'transformation-test-method' }, r.method),
      el('dt', {}, 'URL'), el('dd', { class: 'mono', testid: 'transformation-test-url' }, r.url)),
    headers.length
      ? table(heads, headers.map(([k, v]) => row(heads, [el('code', {}, k), el('code', {}, pretty(v))], { testid: 'transformation-test-header' })), 'transformation-test-headers')
      : el('p', { class: 'muted', testid: 'transformation-test-headers' }, 'No headers of its own (Fenix adds its signature headers).'),
    el('p', { class: 'test-line' }, 'Payload:'),
    el('pre', { testid: 'transformation-test-payload' }, pretty(r.payload)));
}

/**
 * The three routing fields of the endpoint form, for create (`ep` null) and
 * edit: `fields` (channels, filter, transformation: {wrap, input, error}) and
 * `block`, the part of the form that holds them with their Test panels.
 * `types()` answers the event types as now typed in the form.
 */
export function routingFields(ctx, prefix, ep, types) {
  const channels = field('Channels', el('input', { type: 'text', name: 'channels', spellcheck: 'false', autocomplete: 'off',
    props: { value: ep && ep.channels ? ep.channels.join(', ') : '' } }), {
    hint: 'Separated by commas, at most 10 — empty means every channel. An event reaches the endpoint when it carries one of them.', testid: `${prefix}-channels` });
  const filter = field('Filter', el('textarea', { name: 'filter', class: 'code', rows: '3', spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
    placeholder: 'data.amount > 100 && data.currency == "EUR"', props: { value: ep && ep.filter ? ep.filter : '' } }), {
    hint: 'A CEL expression over type, data, channels and tags; the endpoint gets an event when it is true. Empty: no filter.', testid: `${prefix}-filter` });
  const transformation = field('Transformation', el('textarea', { name: 'transformation', class: 'code', rows: '8', spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off', wrap: 'off',
    placeholder: 'function handler(webhook) {\n  webhook.payload = { text: webhook.payload.type };\n  return webhook;\n}', props: { value: ep && ep.transformation ? ep.transformation : '' } }), {
    hint: 'A JavaScript function handler(webhook) { … return webhook; } may change the method, URL, headers and payload, or set cancel. Empty: sent as it is.', testid: `${prefix}-transformation` });

  const filterSample = sampleInputs(`${prefix}-filter-test`, true);
  const transformSample = sampleInputs(`${prefix}-transformation-test`, false);
  // One guess serves both panels.
  let guess = null;
  const sample = () => (guess ||= guessSample(types()));
  const fill = (inputs, withChannel) => async () => {
    const s = await sample();
    if (!inputs.type.input.value) inputs.type.input.value = s.type;
    if (!inputs.data.input.value) inputs.data.input.value = JSON.stringify(s.data, null, 2);
    if (withChannel && !inputs.channels.input.value) inputs.channels.input.value = parseList(channels.input.value)[0] || '';
  };
  const filterTest = testPanel(`${prefix}-filter-test`, 'Test the filter on a sample event', filterSample, fill(filterSample, true),
    (s, result) => runFilterTest(ctx, filter, s, result));
  const transformTest = testPanel(`${prefix}-transformation-test`, 'Test the transformation on a sample event', transformSample, fill(transformSample, false),
    (s, result) => runTransformationTest(ctx, transformation, ep ? ep.id : null, s, result));

  const block = el('fieldset', { class: 'routing' }, el('legend', {}, 'Routing'),
    channels.wrap,
    el('div', { class: 'with-test' }, filter.wrap, el('div', { class: 'row-actions' }, filterTest.open), filterTest.panel),
    el('div', { class: 'with-test' }, transformation.wrap, el('div', { class: 'row-actions' }, transformTest.open), transformTest.panel));
  return { fields: { channels, filter, transformation }, block };
}

/** The routing values of a new endpoint (only those given). */
export function routingBody(f) {
  const body = {};
  const channels = parseList(f.channels.input.value);
  if (channels.length) body.channels = channels;
  if (textOrNull(f.filter.input) !== null) body.filter = f.filter.input.value;
  if (textOrNull(f.transformation.input) !== null) body.transformation = f.transformation.input.value;
  return body;
}

/** What changed of the routing values against the endpoint `now` (a PATCH's part); null clears. */
export function routingPatch(f, now) {
  const patch = {};
  const channels = parseList(f.channels.input.value);
  if (channels.join(',') !== (now.channels || []).join(',')) patch.channels = channels;
  const filter = textOrNull(f.filter.input);
  if (filter !== (now.filter ?? null)) patch.filter = filter;
  const transformation = textOrNull(f.transformation.input);
  if (transformation !== (now.transformation ?? null)) patch.transformation = transformation;
  return patch;
}

/** Puts the endpoint's saved routing values back into the fields (after a save). */
export function routingRefill(f, ep) {
  f.channels.input.value = (ep.channels || []).join(', ');
  f.filter.input.value = ep.filter || '';
  f.transformation.input.value = ep.transformation || '';
}

/** The routing values as facts of the endpoint (every session sees them). */
export function routingFacts(ep) {
  const channels = ep.channels || [];
  return [
    el('dt', {}, 'Channels'), el('dd', { testid: 'endpoint-channels' }, channels.length ? channels.join(', ') : 'every channel'),
    el('dt', {}, 'Filter'), el('dd', {}, ep.filter ? el('pre', { testid: 'endpoint-filter' }, ep.filter) : el('span', { testid: 'endpoint-filter', class: 'muted' }, 'none')),
    el('dt', {}, 'Transformation'), el('dd', {}, ep.transformation
      ? el('pre', { testid: 'endpoint-transformation' }, ep.transformation)
      : el('span', { testid: 'endpoint-transformation', class: 'muted' }, 'none')),
  ];
}
