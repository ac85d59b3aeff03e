// Operator pages: apps, tokens, portal links and the settings in force. A
// portal session never reaches them (app.js routes it to its own app only, and
// the API answers these calls for admins only).

import { api, seg, items, query } from './api.js';
import { el, replace, field, setFieldError, button, message, secretBox, confirmInline, table, row, timeEl, badge, localToIso } from './dom.js';

/** Apps: the list (pages) and the form that creates one. */
export async function appsPage(ctx) {
  if (!ctx.operator) return;
  ctx.heading('Apps');
  const listSlot = el('div');
  ctx.main.append(listSlot);
  const cursors = [];
  const load = async (cursor) => {
    const page = await api('GET', `/v1/apps${query({ limit: 50, cursor })}`);
    if (!ctx.alive()) return;
    const apps = items(page);
    const headers = ['Name', 'Uid', 'Id', 'Created', 'Pages'];
    const rows = apps.map((a) => {
      const base = `#/apps/${seg(a.id)}`;
      return row(headers, [
        el('a', { href: `${base}/endpoints`, testid: 'app-open' }, a.name),
        a.uid ? el('code', {}, a.uid) : el('span', { class: 'muted' }, '—'),
        el('code', {}, a.id),
        timeEl(a.created_at),
        el('span', { class: 'row-actions' },
          el('a', { href: `${base}/endpoints` }, 'Endpoints'),
          el('a', { href: `${base}/deliveries` }, 'Deliveries'),
          el('a', { href: `#/portal-links${query({ app: a.id })}`, testid: 'app-portal-links' }, 'Portal links')),
      ], { testid: 'app-row', 'data-id': a.id, 'data-uid': a.uid || '' });
    });
    replace(listSlot,
      apps.length ? table(headers, rows, 'app-table') : message('No apps yet: create the first one below.', 'info', 'app-empty'),
      el('div', { class: 'pager' },
        cursors.length ? button('First page', () => { cursors.length = 0; load(); }, { testid: 'apps-first' }) : null,
        page.next_cursor ? button('Next page', () => { cursors.push(page.next_cursor); load(page.next_cursor); }, { testid: 'apps-next' }) : null));
  };
  await load();
  if (!ctx.alive()) return;
  const created = el('div', { 'aria-live': 'polite' });
  const form = createAppForm(ctx, async (app) => {
    replace(created, el('p', { class: 'msg msg-ok', role: 'status', testid: 'app-created', 'data-id': app.id },
      `App created: ${app.name}. `, el('a', { href: `#/apps/${seg(app.id)}/endpoints` }, 'Add its endpoints')));
    await load();
  });
  form.hidden = true;
  const open = button('Create an app', () => {
    form.hidden = false;
    open.hidden = true;
    form.querySelector('input').focus();
  }, { kind: 'primary', testid: 'app-create-open' });
  ctx.main.prepend(el('div', { class: 'row-actions' }, open));
  listSlot.before(created);
  ctx.main.append(form);
}

function createAppForm(ctx, onCreated) {
  const name = field('Name', el('input', { type: 'text', required: true, maxlength: '256' }), { testid: 'app-create-name', hint: 'Your customer\'s name, as you want to read it here.' });
  const uid = field('Uid (optional)', el('input', { type: 'text', spellcheck: 'false', maxlength: '64' }), {
    testid: 'app-create-uid', hint: 'Your own id for this customer (letters, digits, _ - .); the API accepts it in place of the app id.' });
  const formError = el('div', { testid: 'app-create-error' });
  const submit = button('Create app', null, { kind: 'primary', type: 'submit', testid: 'app-create-submit' });
  return el('form', { class: 'card', testid: 'app-create-form', novalidate: true, on: { submit: async (e) => {
    e.preventDefault();
    setFieldError(name, '');
    setFieldError(uid, '');
    replace(formError);
    const body = { name: name.input.value.trim() };
    if (uid.input.value.trim()) body.uid = uid.input.value.trim();
    if (!body.name) {
      setFieldError(name, 'Enter a name.');
      name.input.focus();
      return;
    }
    submit.disabled = true;
    try {
      const app = await api('POST', '/v1/apps', body);
      e.target.reset();
      await onCreated(app);
    } catch (err) {
      if (err.code === 'invalid_name') { setFieldError(name, err.message); name.input.focus(); }
      else if (['invalid_uid', 'uid_reserved', 'uid_taken'].includes(err.code)) { setFieldError(uid, err.message); uid.input.focus(); }
      else if (err.status !== 401) replace(formError, message(err.message, 'error'));
    } finally {
      submit.disabled = false;
    }
  } } }, el('h2', {}, 'Create an app'), name.wrap, uid.wrap, formError, submit);
}

/** Tokens: app tokens for a product's back end and admin tokens; create (shown once), list, revoke. */
export async function tokensPage(ctx) {
  ctx.heading('Tokens');
  ctx.main.append(el('p', {}, 'App tokens give a program access to one app only: read, or manage its endpoints and deliveries. Admin tokens reach every app and route, this page included.'));
  const created = el('div', { 'aria-live': 'polite' });
  const listSlot = el('div', { testid: 'tokens-list' });
  const apps = items(await api('GET', '/v1/apps?limit=250'));
  if (!ctx.alive()) return;
  const appName = new Map(apps.map((a) => [a.id, a.name]));
  const load = async () => {
    const list = items(await api('GET', '/v1/tokens'));
    if (!ctx.alive()) return;
    const headers = ['Name', 'App', 'Access', 'Expires', 'Created', ''];
    replace(listSlot, list.length === 0 ? message('No tokens.', 'info', 'token-empty') : table(headers, list.map((t) => {
      const slot = el('div');
      const revoke = button('Revoke', () => confirmInline(slot, `Revoke the token "${t.name || t.id}"? Programs using it lose access at once.`, 'Revoke', async () => {
        try {
          await api('DELETE', `/v1/tokens/${seg(t.id)}`);
          await load();
        } catch (err) {
          if (err.status !== 401) replace(slot, message(err.message, 'error'));
        }
      }, { opener: revoke, testid: 'token-revoke-confirm' }), { testid: 'token-revoke' });
      return row(headers, [
        t.name || el('span', { class: 'muted' }, '—'),
        t.app_id ? (appName.get(t.app_id) || el('code', {}, t.app_id)) : el('span', { class: 'muted' }, 'all (admin)'),
        badge(t.access || 'admin'),
        t.expires_at ? timeEl(t.expires_at) : 'never',
        timeEl(t.created_at),
        el('div', {}, revoke, slot),
      ], { testid: 'token-row', 'data-id': t.id });
    }), 'token-table'));
  };

  const name = field('Name', el('input', { type: 'text', required: true }), { testid: 'token-create-name', hint: 'What uses it, e.g. "billing service".' });
  const app = field('App', el('select', { required: true }, apps.map((a) => el('option', { value: a.id, title: a.uid || a.id }, a.name))), { testid: 'token-create-app' });
  const access = field('Access', el('select', { on: { change: () => { app.wrap.hidden = access.input.value === 'admin'; } } },
    el('option', { value: 'read' }, 'read: see endpoints and deliveries'),
    el('option', { value: 'manage' }, 'manage: also change them'),
    el('option', { value: 'admin' }, 'admin: every app and route')), { testid: 'token-create-access' });
  const expires = field('Expires (optional)', el('input', { type: 'datetime-local' }), { testid: 'token-create-expires', hint: 'Empty: never.' });
  const formError = el('div', { testid: 'token-create-error' });
  const submit = button('Create token', null, { kind: 'primary', type: 'submit', testid: 'token-create-submit' });
  const form = el('form', { class: 'card', testid: 'token-create-form', novalidate: true, on: { submit: async (e) => {
    e.preventDefault();
    for (const f of [name, app, access, expires]) setFieldError(f, '');
    replace(formError);
    const body = { name: name.input.value.trim(), access: access.input.value };
    if (body.access !== 'admin') body.app = app.input.value;
    const exp = localToIso(expires.input.value);
    if (exp) body.expires_at = exp;
    if (!body.name) { setFieldError(name, 'Enter a name.'); name.input.focus(); return; }
    if (body.access !== 'admin' && !body.app) { setFieldError(app, 'Create an app first.'); return; }
    submit.disabled = true;
    try {
      const t = await api('POST', '/v1/tokens', body);
      form.reset();
      app.wrap.hidden = false;
      replace(created, secretBox(`Token "${t.name || body.name}"`, t.token, 'token-secret'));
      created.querySelector('[data-testid=token-secret-copy]').focus();
      await load();
    } catch (err) {
      const target = { invalid_name: name, app_not_found: app, invalid_access: access, invalid_expires_at: expires, invalid_time: expires }[err.code];
      if (target) setFieldError(target, err.message);
      else if (err.status !== 401) replace(formError, message(err.message, 'error'));
    } finally {
      submit.disabled = false;
    }
  } } }, el('h2', {}, 'Create a token'), name.wrap, app.wrap, access.wrap, expires.wrap, formError, submit);
  ctx.main.append(created, listSlot, form);
  await load();
}

const TTLS = [[900, '15 minutes'], [3600, '1 hour'], [8 * 3600, '8 hours'], [86400, '24 hours']];

/**
 * Portal links: mint one for an app (its URL shown once), list an app's
 * links, revoke. The app is chosen in the form (`#/portal-links?app=…`).
 */
export async function portalLinksPage(ctx) {
  ctx.heading('Portal links');
  ctx.main.append(el('p', {}, 'A portal link opens one app\'s pages for one customer, without a token. It works once, and the session it opens ends when the link expires. Your product usually mints links through the API (see docs/console.md); this page does the same by hand.'));
  const apps = items(await api('GET', '/v1/apps?limit=250'));
  if (!ctx.alive()) return;
  if (apps.length === 0) {
    ctx.main.append(el('div', { testid: 'portal-links-list' }, message('Create an app first.', 'info')));
    return;
  }
  const chosen = apps.find((a) => a.id === ctx.query.get('app') || a.uid === ctx.query.get('app')) || apps[0];
  const app = field('App', el('select', {}, apps.map((a) => el('option', { value: a.id, title: a.uid || a.id, props: { selected: a.id === chosen.id } }, a.name))), { testid: 'portal-link-create-app' });
  const base = () => `/v1/apps/${seg(app.input.value)}/portal-sessions`;
  const created = el('div', { 'aria-live': 'polite' });
  const listSlot = el('div', { testid: 'portal-links-list' });
  const load = async () => {
    const list = items(await api('GET', base()));
    if (!ctx.alive()) return;
    const name = apps.find((a) => a.id === app.input.value)?.name || app.input.value;
    const headers = ['Label', 'Access', 'Expires', 'Created', 'State', ''];
    replace(listSlot, el('h2', {}, `Links of ${name}`), list.length === 0 ? message('No portal links for this app.', 'info', 'portal-links-empty') : table(headers, list.map((p) => {
      const slot = el('div');
      const revoke = button('Revoke', () => confirmInline(slot, 'Revoke this link and end the session opened with it?', 'Revoke', async () => {
        try {
          await api('DELETE', `${base()}/${seg(p.id)}`);
          await load();
        } catch (err) {
          if (err.status !== 401) replace(slot, message(err.message, 'error'));
        }
      }, { opener: revoke, testid: 'portal-link-revoke-confirm' }), { testid: 'portal-link-revoke' });
      const state = linkState(p);
      return row(headers, [
        p.label || el('span', { class: 'muted' }, '—'),
        badge(p.access),
        timeEl(p.expires_at),
        timeEl(p.created_at),
        el('span', { testid: 'portal-link-state' }, state),
        state === 'revoked' || state === 'expired' ? '' : el('div', {}, revoke, slot),
      ], { testid: 'portal-link-row', 'data-id': p.id });
    }), 'portal-links-table'));
  };
  app.input.addEventListener('change', () => {
    history.replaceState(null, '', `#/portal-links${query({ app: app.input.value })}`);
    replace(created);
    load();
  });
  const access = field('Access', el('select', {}, el('option', { value: 'read' }, 'read: see endpoints and deliveries'), el('option', { value: 'manage' }, 'manage: also change them')), { testid: 'portal-link-create-access' });
  const ttl = field('Valid for', el('select', {}, TTLS.map(([s, l]) => el('option', { value: String(s), props: { selected: s === 3600 } }, l))), { testid: 'portal-link-create-ttl' });
  const label = field('Label (optional)', el('input', { type: 'text' }), { testid: 'portal-link-create-label', hint: 'For you: who the link is for.' });
  const formError = el('div', { testid: 'portal-link-create-error' });
  const submit = button('Create link', null, { kind: 'primary', type: 'submit', testid: 'portal-link-create-submit' });
  const form = el('form', { class: 'card', testid: 'portal-link-create-form', novalidate: true, on: { submit: async (e) => {
    e.preventDefault();
    replace(formError);
    setFieldError(ttl, '');
    const body = { access: access.input.value, expires_in: Number(ttl.input.value) };
    if (label.input.value.trim()) body.label = label.input.value.trim();
    submit.disabled = true;
    try {
      const p = await api('POST', base(), body);
      replace(created, secretBox('Portal link (works once)', p.url, 'portal-link-url'),
        el('p', { class: 'hint' }, 'Valid until ', timeEl(p.expires_at), '. Opening it yourself would use it up: hand it to the customer.'));
      created.querySelector('[data-testid=portal-link-url-copy]').focus();
      await load();
    } catch (err) {
      if (err.code === 'invalid_expires_in') setFieldError(ttl, err.message);
      else if (err.status !== 401) replace(formError, message(err.message, 'error'));
    } finally {
      submit.disabled = false;
    }
  } } }, el('h2', {}, 'Create a portal link'), app.wrap, access.wrap, ttl.wrap, label.wrap, formError, submit);
  ctx.main.append(form, created, listSlot);
  await load();
}

/** open, used, expired or revoked, from whichever of the fields the API gives. */
function linkState(p) {
  if (p.state) return p.state;
  if (p.revoked_at || p.revoked) return 'revoked';
  if (p.expires_at && new Date(p.expires_at) < new Date()) return 'expired';
  if (p.used_at || p.used) return 'in use';
  return 'open';
}

/**
 * The settings in force, as the server shows them: `{data: [{name, value,
 * secret}]}`, a secret's value already replaced by the server.
 */
export async function settingsPage(ctx) {
  ctx.heading('Settings in force');
  const answer = await api('GET', '/v1/settings');
  if (!ctx.alive()) return;
  // A bare object of name → value is shown too (older servers).
  const list = Array.isArray(answer && answer.data)
    ? answer.data
    : Object.entries(answer || {}).map(([name, value]) => ({ name, value, secret: false }));
  const headers = ['Setting', 'Value'];
  ctx.main.append(el('p', {}, 'Read-only: settings come from the environment or the settings file at start. Secrets are never shown.'),
    table(headers, list.map((st) => row(headers, [
      el('code', {}, st.name),
      st.value === null || st.value === undefined
        ? el('span', { class: 'muted' }, st.secret ? 'not set' : 'not set (default)')
        : el('span', { class: 'mono' }, typeof st.value === 'string' ? st.value : JSON.stringify(st.value)),
    ], { testid: 'setting-row', 'data-key': st.name, 'data-secret': st.secret ? 'true' : 'false' })), 'settings-table'));
}
