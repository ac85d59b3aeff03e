// Endpoints: the list with state and health, create (secret shown once), and
// one endpoint's page: edit, pause and resume, rotate, test event, bulk
// replay of failed deliveries, delete, and its health chart. Its routing
// (channels, filter, transformation, with their tests) is in routing.js.

import { api, seg, items, query } from './api.js';
import { el, append, replace, field, setFieldError, button, message, secretBox, confirmInline, badge, table, row, timeEl } from './dom.js';
import { renderHealth, healthSummary } from './health.js';
import { routingFields, routingFieldFor, routingBody, routingPatch, routingRefill, routingFacts } from './routing.js';

const epBase = (ctx) => `/v1/apps/${seg(ctx.app)}/endpoints`;

/** `a.b, c.*  d` → ['a.b', 'c.*', 'd']. */
function parseTypes(text) {
  return text.split(/[\s,]+/).map((t) => t.trim()).filter(Boolean);
}

/** Which form field an API error code is about. */
function fieldFor(code) {
  if (/^(url_|destination_)/.test(code)) return 'url';
  if (code === 'invalid_event_types') return 'event_types';
  if (code === 'invalid_rate_limit') return 'rate';
  if (code === 'invalid_description') return 'description';
  return routingFieldFor(code);
}

/** The four editable fields of an endpoint, shared by create and edit. */
function endpointFields(prefix, ep) {
  const f = {
    url: field('URL', el('input', { type: 'url', name: 'url', required: true, spellcheck: 'false', autocomplete: 'off', props: { value: ep ? ep.url : '' } }), {
      hint: 'Where Fenix sends the events: https, port 443, a public host name.', testid: `${prefix}-url` }),
    description: field('Description', el('input', { type: 'text', name: 'description', maxlength: '1024', props: { value: ep ? ep.description : '' } }), {
      testid: `${prefix}-description` }),
    event_types: field('Event types', el('input', { type: 'text', name: 'event_types', spellcheck: 'false', props: { value: ep ? ep.event_types.join(', ') : '' } }), {
      hint: 'Separated by commas, e.g. invoice.paid, booking.* — empty means every type.', testid: `${prefix}-event-types` }),
    rate: field('Rate limit (requests per second)', el('input', { type: 'number', name: 'rate', min: '1', max: '100000', step: '1', inputmode: 'numeric',
      props: { value: ep && ep.rate_limit_per_sec ? String(ep.rate_limit_per_sec) : '' } }), {
      hint: 'Empty: no limit.', testid: `${prefix}-rate` }),
  };
  return f;
}

function clearErrors(f) {
  for (const x of Object.values(f)) setFieldError(x, '');
}

/** Shows an API error next to its field (and focuses it), or in `formError`. */
function showError(f, formError, err) {
  const name = fieldFor(err.code);
  if (name && f[name]) {
    setFieldError(f[name], err.message);
    f[name].input.focus();
  } else {
    replace(formError, message(err.message, 'error'));
  }
}

function rateValue(input) {
  const v = input.value.trim();
  return v === '' ? null : Number(v);
}

/** The app's endpoints and, for managers, the form that adds one. */
export async function listPage(ctx) {
  ctx.heading('Endpoints');
  const listSlot = el('div', { testid: 'endpoints-list' });
  const created = el('div', { 'aria-live': 'polite' });
  ctx.main.append(created, listSlot);
  let cursor = null;
  const load = async () => {
    const page = await api('GET', `${epBase(ctx)}${query({ limit: 100, cursor })}`);
    if (!ctx.alive()) return;
    renderList(ctx, listSlot, items(page), page.next_cursor, (c) => { cursor = c; load(); });
  };
  await load();
  if (!ctx.canManage || !ctx.alive()) return;
  // The form opens on demand, so the list comes first on a small screen.
  const form = createForm(ctx, created, load);
  form.hidden = true;
  const open = button('Add an endpoint', () => {
    form.hidden = false;
    open.hidden = true;
    form.querySelector('input').focus();
  }, { kind: 'primary', testid: 'endpoint-create-open' });
  ctx.main.append(el('div', { class: 'row-actions' }, open), form);
}

function renderList(ctx, slot, eps, next, go) {
  if (eps.length === 0) {
    replace(slot, message(ctx.canManage ? 'No endpoints yet: add one below.' : 'No endpoints yet.', 'info', 'endpoint-empty'));
    return;
  }
  const headers = ['URL', 'Description', 'Event types', 'State', 'Health (24 h)'];
  const rows = eps.map((ep) => {
    const health = el('span', { testid: 'endpoint-row-health', class: 'muted' }, '…');
    healthSummary(ctx, ep.id).then((text) => { health.textContent = text; }, () => { health.textContent = '—'; });
    return row(headers, [
      el('a', { href: `#/apps/${seg(ctx.app)}/endpoints/${seg(ep.id)}`, testid: 'endpoint-open', class: 'mono' }, ep.url),
      ep.description || el('span', { class: 'muted' }, '—'),
      ep.event_types.length ? ep.event_types.join(', ') : el('span', { class: 'muted' }, 'every type'),
      badge(ep.state, 'endpoint-state'),
      health,
    ], { testid: 'endpoint-row', 'data-id': ep.id });
  });
  replace(slot, table(headers, rows, 'endpoint-table'),
    next ? el('div', { class: 'pager' }, button('More endpoints', () => go(next), { testid: 'endpoints-next' })) : null);
}

function createForm(ctx, created, reload) {
  const f = endpointFields('endpoint-create');
  const routing = routingFields(ctx, 'endpoint-create', null, () => parseTypes(f.event_types.input.value));
  Object.assign(f, routing.fields);
  const formError = el('div', { testid: 'endpoint-create-error' });
  const submit = button('Add endpoint', null, { kind: 'primary', type: 'submit', testid: 'endpoint-create-submit' });
  const form = el('form', { class: 'card', testid: 'endpoint-create-form', novalidate: true, on: { submit: async (e) => {
    e.preventDefault();
    clearErrors(f);
    replace(formError);
    if (!f.url.input.value.trim()) {
      setFieldError(f.url, 'Enter the URL that should receive the events.');
      f.url.input.focus();
      return;
    }
    const body = { url: f.url.input.value.trim(), event_types: parseTypes(f.event_types.input.value) };
    if (f.description.input.value) body.description = f.description.input.value;
    const rate = rateValue(f.rate.input);
    if (rate !== null) body.rate_limit_per_sec = rate;
    Object.assign(body, routingBody(f));
    submit.disabled = true;
    try {
      const ep = await api('POST', epBase(ctx), body);
      form.reset();
      replace(created,
        el('p', { class: 'msg msg-ok', role: 'status', testid: 'endpoint-created', 'data-id': ep.id }, `Endpoint added: ${ep.url}`),
        ep.secret
          ? secretBox('Signing secret of the new endpoint', ep.secret, 'endpoint-secret')
          : secretBox('Public key of the new endpoint', ep.public_key, 'endpoint-secret'),
        el('a', { href: `#/apps/${seg(ctx.app)}/endpoints/${seg(ep.id)}`, testid: 'endpoint-created-open' }, 'Open the endpoint'));
      created.querySelector('[data-testid=endpoint-secret-copy]').focus();
      await reload();
    } catch (err) {
      if (err.status !== 401) showError(f, formError, err);
    } finally {
      submit.disabled = false;
    }
  } } },
  el('h2', {}, 'Add an endpoint'), f.url.wrap, f.description.wrap, f.event_types.wrap, f.rate.wrap, routing.block, formError, submit);
  return form;
}

/** One endpoint: facts, health, and (for managers) every action on it. */
export async function detailPage(ctx, epId) {
  const path = `${epBase(ctx)}/${seg(epId)}`;
  let ep = await api('GET', path);
  if (!ctx.alive()) return;
  ctx.heading('Endpoint');
  const facts = el('div', { class: 'card', testid: 'endpoint-detail' });
  const stateSlot = el('div');
  const healthSlot = el('section', { class: 'card', 'aria-labelledby': 'health-h', testid: 'endpoint-health' });
  ctx.main.append(facts, stateSlot, healthSlot);

  const refresh = async () => {
    ep = await api('GET', path);
    if (!ctx.alive()) return;
    renderFacts(ctx, facts, ep);
    if (ctx.canManage) renderState(ctx, stateSlot, ep, path, refresh);
  };
  renderFacts(ctx, facts, ep);
  if (ctx.canManage) {
    renderState(ctx, stateSlot, ep, path, refresh);
    ctx.main.append(testSection(ctx, path), replaySection(path), editSection(ctx, path, () => ep, refresh),
      rotateSection(path), deleteSection(ctx, path));
  }
  await renderHealth(ctx, healthSlot, epId);
}

function renderFacts(ctx, slot, ep) {
  const dl = el('dl', { class: 'facts' },
    el('dt', {}, 'URL'), el('dd', { class: 'mono', testid: 'endpoint-url' }, ep.url),
    el('dt', {}, 'State'), el('dd', {}, badge(ep.state, 'endpoint-state'),
      ep.state_reason ? el('span', { class: 'muted', testid: 'endpoint-state-reason' }, ` — ${ep.state_reason}`) : null),
    el('dt', {}, 'Description'), el('dd', { testid: 'endpoint-description' }, ep.description || '—'),
    el('dt', {}, 'Event types'), el('dd', { testid: 'endpoint-event-types' }, ep.event_types.length ? ep.event_types.join(', ') : 'every type'),
    el('dt', {}, 'Rate limit'), el('dd', { testid: 'endpoint-rate' }, ep.rate_limit_per_sec ? `${ep.rate_limit_per_sec} per second` : 'none'),
    routingFacts(ep),
    el('dt', {}, 'Signature scheme'), el('dd', {}, ep.signature_scheme),
    el('dt', {}, 'OAuth2'), el('dd', { testid: 'endpoint-auth' }, oauthText(ep.auth)),
    el('dt', {}, 'Client certificate'), el('dd', { testid: 'endpoint-client-certificate' }, clientCertText(ep.tls)),
    el('dt', {}, 'CA certificates'), el('dd', { testid: 'endpoint-ca-certificates' }, caText(ep.tls)),
    el('dt', {}, 'Id'), el('dd', { class: 'mono' }, ep.id),
    el('dt', {}, 'Created'), el('dd', {}, timeEl(ep.created_at)));
  replace(slot, dl, el('p', {},
    el('a', { href: `#/apps/${seg(ctx.app)}/deliveries?endpoint_id=${seg(ep.id)}`, testid: 'endpoint-deliveries-link' }, 'Delivery log of this endpoint')));
}

/** An endpoint's OAuth2 client credentials as the page shows them: never a secret or key (reads carry none). */
function oauthText(auth) {
  if (!auth) return 'none';
  return `client credentials: client ${auth.client_id}, ${auth.token_endpoint_auth_method}, token URL ${auth.token_url}`;
}

/** A certificate as the page shows it: subject and expiry (reads never carry a key). */
function certText(c) {
  return `${c.subject}, valid until ${c.not_after}${c.expires_soon ? ' (expires within 14 days)' : ''}`;
}

/** An endpoint's client certificate (mTLS), and the previous one during a rotation's overlap. */
function clientCertText(tls) {
  if (!tls || !tls.client_certificate) return 'none';
  const prev = tls.previous_client_certificate;
  return certText(tls.client_certificate) + (prev ? `; previous ${prev.subject} presented until ${prev.expires_at}` : '');
}

/** The private CAs an endpoint trusts for its receiver, on top of the public roots. */
function caText(tls) {
  if (!tls || tls.ca_certificates.length === 0) return 'public roots only';
  return `public roots and ${tls.ca_certificates.map(certText).join('; ')}`;
}

/** Pause, or resume with the choice of replaying what was skipped meanwhile. */
function renderState(ctx, slot, ep, path, refresh) {
  const status = el('div', { testid: 'endpoint-state-status', 'aria-live': 'polite' });
  let controls;
  if (ep.state === 'active') {
    const pause = button('Pause', async () => {
      pause.disabled = true;
      try {
        await api('POST', `${path}/pause`);
        await refresh();
        const msg = message('Paused: deliveries that come due are skipped until you resume.', 'ok');
        slot.querySelector('[data-testid=endpoint-state-status]').append(msg);
        slot.querySelector('[data-testid=endpoint-resume]')?.focus();
      } catch (err) {
        if (err.status !== 401) replace(status, message(err.message, 'error'));
        pause.disabled = false;
      }
    }, { testid: 'endpoint-pause' });
    controls = [el('p', {}, 'Pausing stops deliveries to this endpoint; they are marked skipped and can be replayed when you resume.'), pause];
  } else {
    // Resume asks first whether to replay what was skipped: the choice is the point of resuming.
    const panel = el('div');
    const resume = button('Resume…', () => {
      const replay = el('input', { type: 'checkbox', id: 'resume-replay', testid: 'resume-replay-skipped', props: { checked: true } });
      const confirm = button('Resume', async () => {
        confirm.disabled = true;
        try {
          const r = await api('POST', `${path}/resume`, { replay_skipped: replay.checked });
          await refresh();
          const text = replay.checked ? `Resumed; ${r.replayed} skipped ${r.replayed === 1 ? 'delivery' : 'deliveries'} sent again.` : 'Resumed.';
          slot.querySelector('[data-testid=endpoint-state-status]').append(message(text, 'ok', 'endpoint-resumed'));
          slot.querySelector('[data-testid=endpoint-pause]')?.focus();
        } catch (err) {
          if (err.status !== 401) replace(status, message(err.message, 'error'));
          confirm.disabled = false;
        }
      }, { kind: 'primary', testid: 'resume-confirm' });
      const cancel = button('Cancel', () => { panel.replaceChildren(); resume.focus(); }, { testid: 'resume-cancel' });
      replace(panel, el('div', { class: 'confirm', role: 'group', 'aria-label': 'Resume this endpoint', on: { keydown: (e) => { if (e.key === 'Escape') cancel.click(); } } },
        el('label', { for: 'resume-replay', class: 'check' }, replay, 'Replay what was skipped while it was not active'),
        confirm, cancel));
      replay.focus();
    }, { kind: 'primary', testid: 'endpoint-resume' });
    controls = [
      el('p', {}, ep.state === 'disabled' ? 'This endpoint was disabled. Resuming makes it active again.' : 'This endpoint is paused.'),
      resume,
      panel,
    ];
  }
  replace(slot, el('section', { class: 'card' }, el('h2', {}, ep.state === 'active' ? 'Pause' : 'Resume'), controls, status));
}

function testSection(ctx, path) {
  const type = field('Event type', el('input', { type: 'text', spellcheck: 'false', props: { value: 'fenix.test' } }), { testid: 'endpoint-test-type' });
  const status = el('div', { testid: 'endpoint-test-status', 'aria-live': 'polite' });
  const send = button('Send a test event', null, { type: 'submit', testid: 'endpoint-send-test' });
  return el('form', { class: 'card', novalidate: true, on: { submit: async (e) => {
    e.preventDefault();
    send.disabled = true;
    replace(status);
    setFieldError(type, '');
    try {
      const body = type.input.value.trim() ? { event_type: type.input.value.trim() } : {};
      const r = await api('POST', `${path}/test`, body);
      const deliveryId = r.delivery_id || (r.delivery && r.delivery.id);
      replace(status,
        el('p', { class: 'msg msg-ok', role: 'status', testid: 'test-event-sent', 'data-delivery-id': deliveryId || '', 'data-event-id': r.event_id || r.id || '' },
          'Test event sent to this endpoint only. ',
          deliveryId ? el('a', { href: `#/apps/${seg(ctx.app)}/deliveries/${seg(deliveryId)}`, testid: 'test-event-delivery' }, 'Follow its delivery') : null));
    } catch (err) {
      if (err.code === 'invalid_event_type') setFieldError(type, err.message);
      else if (err.status !== 401) replace(status, message(err.message, 'error'));
    } finally {
      send.disabled = false;
    }
  } } }, el('h2', {}, 'Test'), el('p', {}, 'Sends one event to this endpoint, whatever its event types.'), type.wrap, send, status);
}

function replaySection(path) {
  const status = el('div', { testid: 'endpoint-replay-status', 'aria-live': 'polite' });
  const go = button('Replay failed deliveries', async () => {
    go.disabled = true;
    replace(status);
    try {
      const r = await api('POST', `${path}/replay`, { statuses: ['failed'] });
      replace(status, message(`${r.replayed} failed ${r.replayed === 1 ? 'delivery' : 'deliveries'} queued again.`, 'ok', 'endpoint-replayed'),
        r.skipped_payload_expired ? message(`${r.skipped_payload_expired} could not be sent again: retention purged their payload.`, 'warn') : null);
    } catch (err) {
      if (err.status !== 401) replace(status, message(err.message, 'error'));
    } finally {
      go.disabled = false;
    }
  }, { testid: 'endpoint-replay-failed' });
  return el('section', { class: 'card' }, el('h2', {}, 'Replay'),
    el('p', {}, 'Sends every failed delivery of this endpoint again, with its original event id and payload.'), go, status);
}

function editSection(ctx, path, current, refresh) {
  const ep = current();
  const f = endpointFields('endpoint-edit', ep);
  const routing = routingFields(ctx, 'endpoint-edit', ep, () => parseTypes(f.event_types.input.value));
  Object.assign(f, routing.fields);
  const formError = el('div', { testid: 'endpoint-edit-error' });
  const status = el('div', { testid: 'endpoint-edit-status', 'aria-live': 'polite' });
  const submit = button('Save changes', null, { kind: 'primary', type: 'submit', testid: 'endpoint-edit-submit' });
  return el('form', { class: 'card', testid: 'endpoint-edit-form', novalidate: true, on: { submit: async (e) => {
    e.preventDefault();
    clearErrors(f);
    replace(formError);
    replace(status);
    const now = current();
    // Only what changed: an unchanged URL is not checked (and resolved) again.
    const patch = {};
    const url = f.url.input.value.trim();
    if (url !== now.url) patch.url = url;
    if (f.description.input.value !== now.description) patch.description = f.description.input.value;
    const types = parseTypes(f.event_types.input.value);
    if (types.join(',') !== now.event_types.join(',')) patch.event_types = types;
    const rate = rateValue(f.rate.input);
    if (rate !== (now.rate_limit_per_sec ?? null)) patch.rate_limit_per_sec = rate;
    Object.assign(patch, routingPatch(f, now));
    if (Object.keys(patch).length === 0) {
      replace(status, message('Nothing changed.', 'info'));
      return;
    }
    submit.disabled = true;
    try {
      await api('PATCH', path, patch);
      await refresh();
      const fresh = current();
      f.url.input.value = fresh.url;
      f.event_types.input.value = fresh.event_types.join(', ');
      routingRefill(f, fresh);
      replace(status, message('Saved.', 'ok'));
    } catch (err) {
      if (err.status !== 401) showError(f, formError, err);
    } finally {
      submit.disabled = false;
    }
  } } }, el('h2', {}, 'Edit'), f.url.wrap, f.description.wrap, f.event_types.wrap, f.rate.wrap, routing.block, formError, submit, status);
}

const OVERLAPS = [
  [0, 'No overlap: the old secret stops at once'],
  [3600, '1 hour'],
  [86400, '24 hours'],
  [7 * 86400, '7 days'],
  [30 * 86400, '30 days'],
];

function rotateSection(path) {
  const select = el('select', { testid: 'endpoint-rotate-overlap' },
    OVERLAPS.map(([s, label]) => el('option', { value: String(s), props: { selected: s === 86400 } }, label)));
  const overlap = field('Old secret keeps signing for', select);
  const status = el('div', { testid: 'endpoint-rotate-status', 'aria-live': 'polite' });
  const go = button('Rotate the secret', null, { type: 'submit', testid: 'endpoint-rotate' });
  return el('form', { class: 'card', novalidate: true, on: { submit: async (e) => {
    e.preventDefault();
    go.disabled = true;
    replace(status);
    try {
      const r = await api('POST', `${path}/secret/rotate`, { overlap_seconds: Number(select.value) });
      // An Ed25519 endpoint's answer carries its new public key, never a secret.
      const box = r.secret
        ? secretBox(`New signing secret (version ${r.version})`, r.secret, 'endpoint-secret')
        : secretBox(`New public key (version ${r.version}); the private key never leaves Fenix`, r.public_key, 'endpoint-secret');
      replace(status, box,
        el('p', { class: 'hint' }, 'The previous secret signs too until ', el('time', { datetime: r.previous_expires_at }, new Date(r.previous_expires_at).toLocaleString()), '.'));
      status.querySelector('[data-testid=endpoint-secret-copy]').focus();
    } catch (err) {
      if (err.status !== 401) replace(status, message(err.message, 'error'));
    } finally {
      go.disabled = false;
    }
  } } }, el('h2', {}, 'Rotate the signing secret'),
  el('p', {}, 'During the overlap every request carries a signature with each live secret, so the receiver can switch without missing any.'),
  overlap.wrap, go, status);
}

function deleteSection(ctx, path) {
  const slot = el('div');
  const del = button('Delete this endpoint', () => {
    confirmInline(slot, 'Delete this endpoint with its secrets and its whole delivery log? This cannot be undone.', 'Delete', async () => {
      try {
        await api('DELETE', path);
        ctx.navigate(`#/apps/${seg(ctx.app)}/endpoints`);
      } catch (err) {
        if (err.status !== 401) replace(slot, message(err.message, 'error'));
      }
    }, { opener: del, testid: 'delete-confirm' });
  }, { kind: 'danger', testid: 'endpoint-delete' });
  return el('section', { class: 'card' }, el('h2', {}, 'Delete'), del, slot);
}
