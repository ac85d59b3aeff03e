// The delivery log: filters, pages by the API's cursors, one delivery's
// attempts and payload, replay of one delivery or of an endpoint's failures;
// under the log, the app's tasks (tasks.js).

import { api, seg, items, query } from './api.js';
import { el, replace, field, button, message, badge, table, row, timeEl, localToIso, isoToLocal } from './dom.js';
import { tasksSection } from './tasks.js';

// `failing`: still being retried after a failed attempt (pending or in flight meanwhile).
const STATUSES = ['scheduled', 'pending', 'in_flight', 'succeeded', 'failed', 'skipped', 'failing'];
const FILTERS = ['status', 'endpoint_id', 'event_type', 'event_id', 'channel', 'tag', 'since', 'until'];
const PAGE = 50;
/** Events per page when the log is filtered by event type (it then pages by event). */
const EVENTS_PAGE = 20;

const appBase = (ctx) => `/v1/apps/${seg(ctx.app)}`;

/** The latest attempt's failure: its status code and error, or a dash. */
function lastError(d) {
  const parts = [d.last_status_code ? String(d.last_status_code) : null, d.last_error].filter(Boolean);
  return parts.length ? el('span', { testid: 'delivery-last-error-text' }, parts.join(' · ')) : el('span', { class: 'muted' }, '—');
}

/** Error classes of the routing (an endpoint's transformation) in words; others show as the API names them. */
const ERROR_WORDS = {
  transformation_failed: 'The endpoint\'s transformation failed on this event: no request was sent.',
};

/** Why a skipped delivery was skipped, in words, when the API says why (null otherwise). */
function skipReason(d) {
  if (d.status !== 'skipped') return null;
  const reason = d.skip_reason || d.skipped_reason || d.reason || (d.last_error === 'transformation_cancelled' ? d.last_error : null);
  if (!reason) return null;
  if (reason === 'transformation_cancelled') {
    return el('span', { testid: 'delivery-skip-reason', 'data-reason': reason },
      'Cancelled by the endpoint\'s transformation (it set cancel for this event): nothing was sent. ', el('code', {}, reason));
  }
  return el('span', { testid: 'delivery-skip-reason', 'data-reason': reason }, el('code', {}, reason));
}

/** A list of channels or tags as small badges, or a dash. */
function listOf(values, testid) {
  if (!Array.isArray(values) || values.length === 0) return el('span', { class: 'muted', testid }, '—');
  return el('span', { class: 'tag-list', testid }, values.map((v) => el('code', {}, v)));
}

/** The log with its filters; the filters and the cursor live in the address (#…?status=failed). */
export async function logPage(ctx) {
  ctx.heading('Delivery log');
  const filters = {};
  for (const k of FILTERS) if (ctx.query.get(k)) filters[k] = ctx.query.get(k);
  const cursor = ctx.query.get('cursor') || undefined;

  // The endpoint filter offers the app's endpoints by URL.
  const endpoints = items(await api('GET', `${appBase(ctx)}/endpoints?limit=250`));
  if (!ctx.alive()) return;
  const urlOf = new Map(endpoints.map((e) => [e.id, e.url]));

  const status = field('Status', el('select', {},
    el('option', { value: '' }, 'any'),
    STATUSES.map((s) => el('option', { value: s, props: { selected: filters.status === s } }, s.replace('_', ' ')))), { testid: 'deliveries-filter-status' });
  const endpoint = field('Endpoint', el('select', {},
    el('option', { value: '' }, 'any'),
    endpoints.map((e) => el('option', { value: e.id, props: { selected: filters.endpoint_id === e.id } }, e.url))), { testid: 'deliveries-filter-endpoint' });
  const eventType = field('Event type', el('input', { type: 'text', spellcheck: 'false', placeholder: 'invoice.paid', props: { value: filters.event_type || '' } }), { testid: 'deliveries-filter-event-type' });
  const event = field('Event id', el('input', { type: 'text', spellcheck: 'false', placeholder: 'evt_…', props: { value: filters.event_id || '' } }), { testid: 'deliveries-filter-event' });
  const channel = field('Channel', el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', props: { value: filters.channel || '' } }), { testid: 'deliveries-filter-channel' });
  const tag = field('Tag', el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', props: { value: filters.tag || '' } }), { testid: 'deliveries-filter-tag' });
  const since = field('Created from', el('input', { type: 'datetime-local', props: { value: isoToLocal(filters.since) } }), { testid: 'deliveries-filter-since' });
  const until = field('Created before', el('input', { type: 'datetime-local', props: { value: isoToLocal(filters.until) } }), { testid: 'deliveries-filter-until' });
  const go = (params) => ctx.navigate(`#/apps/${seg(ctx.app)}/deliveries${query(params)}`);
  const form = el('form', { class: 'card filters', testid: 'deliveries-filters', on: { submit: (e) => {
    e.preventDefault();
    go({
      status: status.input.value,
      endpoint_id: endpoint.input.value,
      event_type: eventType.input.value.trim(),
      event_id: event.input.value.trim(),
      channel: channel.input.value.trim(),
      tag: tag.input.value.trim(),
      since: localToIso(since.input.value),
      until: localToIso(until.input.value),
    });
  } } },
  status.wrap, endpoint.wrap, eventType.wrap, event.wrap, channel.wrap, tag.wrap, since.wrap, until.wrap,
  el('div', { class: 'row-actions' },
    button('Apply filters', null, { kind: 'primary', type: 'submit', testid: 'deliveries-filter-apply' }),
    button('Clear', () => go({}), { testid: 'deliveries-filter-reset' })));
  ctx.main.append(form);

  if (filters.endpoint_id && ctx.canManage) ctx.main.append(bulkReplay(ctx, filters.endpoint_id));

  const listSlot = el('div', { 'aria-live': 'polite', testid: 'deliveries-list' });
  // Bulk work over many deliveries, below the list whatever the list shows.
  ctx.main.append(listSlot, tasksSection(ctx, endpoints));
  let page;
  try {
    page = filters.event_type ? await byEventType(ctx, filters, cursor) : await api('GET', `${appBase(ctx)}/deliveries${query({ ...filters, limit: PAGE, cursor })}`);
  } catch (err) {
    if (err.status === 400 && ctx.alive()) {
      // A filter the API refused (a time out of range, a stale cursor): say which, in words.
      replace(listSlot, message(err.message, 'error', 'page-error'));
      return;
    }
    throw err;
  }
  if (!ctx.alive()) return;
  const rows = items(page);
  const headers = ['Delivery', 'Status', 'Endpoint', 'Event type', 'Attempts', 'Last attempt', 'Last error', 'Created'];
  const pager = el('div', { class: 'pager' },
    cursor ? button('First page', () => go(filters), { testid: 'page-first' }) : null,
    cursor ? button('Previous page', () => history.back(), { testid: 'page-prev' }) : null,
    page.next_cursor ? button('Next page', () => go({ ...filters, cursor: page.next_cursor }), { testid: 'page-next' }) : null,
    button('Refresh', () => ctx.refresh(), { testid: 'deliveries-refresh' }));
  if (rows.length === 0) {
    replace(listSlot, message(cursor ? 'No more deliveries.' : 'No deliveries match.', 'info', 'delivery-empty'), pager);
    return;
  }
  replace(listSlot, table(headers, rows.map((d) => row(headers, [
    el('a', { href: `#/apps/${seg(ctx.app)}/deliveries/${seg(d.id)}`, class: 'mono', testid: 'delivery-open' }, d.id),
    badge(d.status, 'delivery-status'),
    el('a', { href: `#/apps/${seg(ctx.app)}/endpoints/${seg(d.endpoint_id)}`, class: 'mono' }, urlOf.get(d.endpoint_id) || d.endpoint_id),
    el('code', {}, d.event_type),
    String(d.attempt_count),
    timeEl(d.last_attempt_at),
    lastError(d),
    timeEl(d.created_at),
  ], { testid: 'delivery-row', 'data-id': d.id, 'data-status': d.status })), 'deliveries-table'),
  filters.event_type ? el('p', { class: 'hint' }, `Filtered by event type, the log pages by event: ${EVENTS_PAGE} events of that type per page, each with its deliveries.`) : null,
  pager);
}

/**
 * The delivery list has no event-type filter; the event log has one. So with
 * an event type the log pages through that type's events (their cursor) and
 * shows each event's deliveries, with the other filters applied to them.
 */
async function byEventType(ctx, filters, cursor) {
  const events = await api('GET', `${appBase(ctx)}/events${query({ event_type: filters.event_type, channel: filters.channel, tag: filters.tag, since: filters.since, until: filters.until, limit: EVENTS_PAGE, cursor })}`);
  const wanted = items(events).filter((e) => !filters.event_id || e.id === filters.event_id);
  const lists = await Promise.all(wanted.map((e) => api('GET', `${appBase(ctx)}/deliveries${query({ event_id: e.id, endpoint_id: filters.endpoint_id, status: filters.status, limit: 250 })}`)
    .then((page) => items(page).map((d) => ({ ...d, event_type: e.type })))));
  return { data: lists.flat(), next_cursor: events.next_cursor };
}

function bulkReplay(ctx, epId) {
  const status = el('div', { testid: 'endpoint-replay-status', 'aria-live': 'polite' });
  const go = button('Replay this endpoint\'s failed deliveries', async () => {
    go.disabled = true;
    try {
      const r = await api('POST', `${appBase(ctx)}/endpoints/${seg(epId)}/replay`, { statuses: ['failed'] });
      replace(status, message(`${r.replayed} failed ${r.replayed === 1 ? 'delivery' : 'deliveries'} queued again.`, 'ok', 'endpoint-replayed'),
        r.skipped_payload_expired ? message(`${r.skipped_payload_expired} could not be sent again: retention purged their payload.`, 'warn') : null);
    } catch (err) {
      if (err.status !== 401) replace(status, message(err.message, 'error'));
    } finally {
      go.disabled = false;
    }
  }, { testid: 'endpoint-replay-failed' });
  return el('div', { class: 'row-actions' }, go, status);
}

/** One delivery: its facts, attempts and payload; replay when it failed or was skipped. */
export async function detailPage(ctx, dlvId) {
  const path = `${appBase(ctx)}/deliveries/${seg(dlvId)}`;
  const [delivery, attempts] = await Promise.all([api('GET', path), api('GET', `${path}/attempts`)]);
  if (!ctx.alive()) return;
  ctx.heading('Delivery');
  const facts = el('div', { class: 'card', testid: 'delivery-detail' });
  const attemptsSlot = el('section', { class: 'card' });
  const payloadSlot = el('section', { class: 'card' });
  ctx.main.append(facts, attemptsSlot, payloadSlot);

  const render = (d, atts) => {
    renderFacts(ctx, facts, d, path, reload);
    renderAttempts(attemptsSlot, items(atts));
  };
  let timer = null;
  async function reload() {
    clearTimeout(timer);
    const [d, atts] = await Promise.all([api('GET', path), api('GET', `${path}/attempts`)]);
    if (!ctx.alive()) return;
    render(d, atts);
    poll(d);
  }
  // While the delivery is on its way, follow it (stops when the page changes).
  function poll(d) {
    if (d.status === 'pending' || d.status === 'in_flight') {
      timer = setTimeout(() => { if (ctx.alive()) reload().catch(() => {}); }, 1500);
    }
  }
  render(delivery, attempts);
  poll(delivery);
  await renderPayload(ctx, payloadSlot, delivery.event_id);
}

function renderFacts(ctx, slot, d, path, reload) {
  const status = el('div', { testid: 'delivery-replay-status', 'aria-live': 'polite' });
  const replayable = (d.status === 'failed' || d.status === 'skipped') && ctx.canManage;
  const replay = replayable ? button('Replay this delivery', async () => {
    replay.disabled = true;
    try {
      await api('POST', `${path}/replay`);
      await reload();
      const fresh = slot.querySelector('[data-testid=delivery-replay-status]');
      if (fresh) fresh.append(message('Queued again with its original event id and payload.', 'ok'));
      slot.querySelector('[data-testid=delivery-refresh]')?.focus();
    } catch (err) {
      if (err.status !== 401) replace(status, message(err.message, 'error'));
      replay.disabled = false;
    }
  }, { kind: 'primary', testid: 'delivery-replay' }) : null;
  replace(slot,
    el('dl', { class: 'facts' },
      el('dt', {}, 'Id'), el('dd', { class: 'mono' }, d.id),
      el('dt', {}, 'Status'), el('dd', {}, badge(d.status, 'delivery-detail-status')),
      el('dt', {}, 'Endpoint'), el('dd', {}, el('a', { href: `#/apps/${seg(ctx.app)}/endpoints/${seg(d.endpoint_id)}`, class: 'mono' }, d.endpoint_id)),
      el('dt', {}, 'Event'), el('dd', { class: 'mono' }, d.event_id),
      el('dt', {}, 'Attempts'), el('dd', { testid: 'delivery-attempt-count' }, String(d.attempt_count)),
      d.last_error || d.last_status_code ? [el('dt', {}, 'Last error'), el('dd', { testid: 'delivery-last-error' }, lastError(d))] : null,
      skipReason(d) ? [el('dt', {}, 'Skipped because'), el('dd', {}, skipReason(d))] : null,
      Array.isArray(d.channels) ? [el('dt', {}, 'Channels'), el('dd', {}, listOf(d.channels, 'delivery-channels'))] : null,
      Array.isArray(d.tags) ? [el('dt', {}, 'Tags'), el('dd', {}, listOf(d.tags, 'delivery-tags'))] : null,
      d.next_attempt_at ? [el('dt', {}, 'Next attempt'), el('dd', {}, timeEl(d.next_attempt_at))] : null,
      el('dt', {}, 'Created'), el('dd', {}, timeEl(d.created_at))),
    el('div', { class: 'row-actions' }, replay, button('Refresh', () => reload(), { testid: 'delivery-refresh' })),
    status);
}

function renderAttempts(slot, attempts) {
  if (attempts.length === 0) {
    replace(slot, el('h2', {}, 'Attempts'), el('p', { class: 'muted', testid: 'attempt-none' }, 'No attempt yet.'));
    return;
  }
  const headers = ['#', 'Time', 'Status code', 'Duration', 'Error', 'Response excerpt'];
  replace(slot, el('h2', {}, 'Attempts'), table(headers, attempts.map((a) => row(headers, [
    String(a.attempt_number),
    timeEl(a.started_at),
    el('span', { testid: 'attempt-status-code' }, a.response_status === null ? 'no response' : String(a.response_status)),
    `${a.duration_ms} ms`,
    el('span', { testid: 'attempt-error', 'data-error': a.error || undefined }, a.error
      ? [el('code', {}, a.error), Object.hasOwn(ERROR_WORDS, a.error) ? el('div', { testid: 'attempt-error-words' }, ERROR_WORDS[a.error]) : null,
        a.error_detail ? el('div', { class: 'muted' }, a.error_detail) : null]
      : '—'),
    a.response_excerpt ? el('pre', { testid: 'attempt-excerpt' }, a.response_excerpt) : el('span', { class: 'muted' }, '—'),
  ], { testid: 'attempt-row', 'data-number': String(a.attempt_number) })), 'attempt-list'));
}

/** The event's payload as text (markup in it stays text), or why it is gone. */
async function renderPayload(ctx, slot, eventId) {
  replace(slot, el('h2', {}, 'Payload'), el('p', { class: 'muted' }, 'Loading…'));
  let evt;
  try {
    evt = await api('GET', `${appBase(ctx)}/events/${seg(eventId)}?include=payload`);
  } catch (err) {
    if (err.status !== 401 && ctx.alive()) replace(slot, el('h2', {}, 'Payload'), message(err.message, 'error'));
    return;
  }
  if (!ctx.alive()) return;
  const head = [el('p', {}, 'Event type ', el('code', { testid: 'payload-type' }, evt.type), ', sent ', timeEl(evt.created_at), '.'),
    Array.isArray(evt.channels) || Array.isArray(evt.tags)
      ? el('dl', { class: 'facts' },
        el('dt', {}, 'Channels'), el('dd', {}, listOf(evt.channels, 'event-channels')),
        el('dt', {}, 'Tags'), el('dd', {}, listOf(evt.tags, 'event-tags')))
      : null];
  if (evt.payload_purged || evt.data === undefined || evt.data === null) {
    replace(slot, el('h2', {}, 'Payload'), head,
      message('The payload is no longer stored: retention (FENIX_PAYLOAD_RETENTION) purged it. Attempts and times stay in the log.', 'warn', 'delivery-payload-purged'));
    return;
  }
  replace(slot, el('h2', {}, 'Payload'), head, el('pre', { testid: 'delivery-payload' }, JSON.stringify(evt.data, null, 2)));
}
