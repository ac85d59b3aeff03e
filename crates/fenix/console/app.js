// Fenix console: the shell (session, navigation, hash router). Pages live in
// endpoints.js (routing.js), deliveries.js (tasks.js), health.js, operator.js, event_types.js; sessions in login.js.
// Every text is set with text nodes (dom.js), never parsed as markup.
//
// data-testid used by the browser tests (one page shows at a time, so a test id
// is unique on the page unless it names a row):
//   shell:     app, nav, nav-apps, nav-tokens, nav-portal-links, nav-settings (operator only),
//              nav-endpoints, nav-deliveries (inside an app), portal-app (the app's name, portal
//              sessions) / current-app (operators), session-kind (data-kind), logout, page-title, page-error
//   login:     login-form, login-token, login-token-error, login-submit, login-reason, login-status
//   refusal:   refusal (data-code = link_used | link_expired | link_revoked | link_not_found |
//              session_expired | session_revoked | logged_out | unauthorized), refusal-title, refusal-detail
//   choice:    session-choice (data-current-kind = operator | portal; a portal link opened beside a live
//              session), session-choice-title, session-choice-current, session-choice-keep,
//              session-choice-replace, session-choice-status, session-choice-error
//   confirm:   confirm-ok, confirm-cancel (every inline confirmation: delete, revoke)
//   secrets:   <prefix> (the text), <prefix>-copy, <prefix>-copied, <prefix>-done, <prefix>-box, with
//              prefix endpoint-secret (create, rotate), token-secret, portal-link-url
//   endpoints: endpoints-list, endpoint-table, endpoint-row (data-id), endpoint-open, endpoint-state,
//              endpoint-row-health, endpoint-empty, endpoints-next, endpoint-create-open, endpoint-create-form,
//              endpoint-create-{url,description,event-types,rate} and each with -error,
//              endpoint-create-submit, endpoint-create-error, endpoint-created (data-id), endpoint-created-open
//   endpoint:  endpoint-detail, endpoint-url, endpoint-state, endpoint-state-reason, endpoint-description,
//              endpoint-event-types, endpoint-rate, endpoint-deliveries-link,
//              endpoint-pause, endpoint-resume, resume-replay-skipped, resume-confirm, resume-cancel,
//              endpoint-state-status, endpoint-resumed,
//              endpoint-test-type, endpoint-send-test, test-event-sent (data-delivery-id, data-event-id),
//              test-event-delivery, endpoint-replay-failed, endpoint-replay-status, endpoint-replayed,
//              endpoint-edit-form, endpoint-edit-{url,description,event-types,rate} (+ -error),
//              endpoint-edit-submit, endpoint-edit-error, endpoint-edit-status,
//              endpoint-rotate-overlap, endpoint-rotate, endpoint-rotate-status, endpoint-delete
//   routing:   (routing.js; <form> = endpoint-create or endpoint-edit) <form>-{channels,filter,transformation}
//              (+ -error); the tests <form>-filter-test and <form>-transformation-test (the Test button,
//              aria-expanded), each with -panel, -type, -data, -run, -result, and -channels, -tags (filter);
//              filter-test-outcome / transformation-test-outcome (data-outcome = matched | not_matched |
//              no_filter | transformed | cancelled | no_transformation | error, with data-line, data-column
//              and -position when the API says where), transformation-test-{method,url,headers,header,payload};
//              facts endpoint-channels, endpoint-filter, endpoint-transformation
//   health:    endpoint-health, endpoint-health-chart (the svg), health-stats, health-success-rate,
//              health-attempts, health-failures, health-dead-letter, health-skipped,
//              health-bar (one per hour: data-hour, data-attempts, data-successes), health-none
//   log:       deliveries-filters, deliveries-filter-{status,endpoint,event-type,event,channel,tag,since,until},
//              deliveries-filter-apply, deliveries-filter-reset, deliveries-list, deliveries-table,
//              delivery-row (data-id, data-status), delivery-open, delivery-status, delivery-empty,
//              page-next, page-prev, page-first, deliveries-refresh, endpoint-replay-failed (endpoint filter)
//   tasks:     (tasks.js, under the log) tasks-section, task-form, task-kind, task-statuses (fieldset) with
//              task-status (data-status) and task-statuses-error, task-endpoint, task-status-class,
//              task-event-types, task-since, task-until (each with -error), task-count, task-count-result,
//              task-count-text (data-count), task-start, task-start-hint, task-started (data-id),
//              task-form-error, tasks-status, tasks-error, task-cancelled, tasks-list, tasks-table, tasks-empty,
//              tasks-more, task-row (data-id, data-state), task-id, task-kind-shown, task-selection, task-state,
//              task-progress (<progress>, data-done, data-selected), task-progress-text, task-rate, task-cancel
//   delivery:  delivery-detail, delivery-detail-status, delivery-attempt-count, delivery-replay,
//              delivery-replay-status, delivery-refresh, attempt-row (data-number), attempt-status-code,
//              attempt-error (data-error), attempt-error-words, attempt-excerpt, attempt-none, payload-type,
//              delivery-payload, delivery-payload-purged, delivery-skip-reason (data-reason),
//              delivery-channels, delivery-tags, event-channels, event-tags
//   apps:      app-create-open, app-create-form, app-create-name, app-create-uid (+ -error),
//              app-create-submit, app-create-error, app-created (data-id), app-table, app-row (data-id,
//              data-uid), app-open, app-portal-links, app-empty, apps-next, apps-first
//   tokens:    tokens-list, token-table, token-row (data-id), token-revoke, token-create-form,
//              token-create-{name,app,access,expires} (+ -error), token-create-submit, token-create-error
//   portal:    portal-link-create-form, portal-link-create-{app,access,ttl,label}, portal-link-create-submit,
//              portal-link-create-error, portal-links-list, portal-links-table, portal-link-row (data-id),
//              portal-link-state, portal-link-revoke
//   settings:  settings-table, setting-row (data-key)
//   catalogue: nav-event-types (every session), event-types-list, event-type (data-name), event-type-name,
//              event-type-deprecated, event-type-description, event-type-schema, event-type-example,
//              event-types-empty, event-types-next

import { api, setCsrf, onSessionLost, seg } from './api.js';
import { el, replace, message } from './dom.js';
import { renderLogin, renderRefusal, renderSessionChoice, exchangePortalLink } from './login.js';
import * as endpoints from './endpoints.js';
import * as deliveries from './deliveries.js';
import * as operator from './operator.js';
import * as eventTypes from './event_types.js';

const root = document.getElementById('app');
const isPortalPath = () => location.pathname.replace(/\/+$/, '') === '/console/portal';

let session = null;
let generation = 0;
let lostHandled = false;
const appNames = new Map();

/** Reads the session; without one, shows login, exchanges a portal link, or refuses. */
async function boot() {
  generation++;
  lostHandled = false;
  const hash = location.hash.slice(1);
  if (isPortalPath() && hash.startsWith('fxp_')) {
    // Out of the address bar at once, so it stays in no history entry, bookmark or screenshot.
    history.replaceState(null, '', location.pathname);
    if (!(await openPortalLink(hash))) return;
  }
  try {
    session = await api('GET', '/console/api/session');
  } catch (err) {
    session = null;
    setCsrf(null);
    if (err.status !== 401) return renderFatal(err);
    if (isPortalPath()) return renderRefusal(root, err);
    return renderLogin(root, err, boot);
  }
  setCsrf(session.csrf_token);
  if (session.kind === 'portal' && !isPortalPath()) {
    // A portal session lives at /console/portal; the operator address shows it nothing more.
    history.replaceState(null, '', `/console/portal${location.hash}`);
  }
  if (session.app_id && session.app_name) appNames.set(session.app_id, session.app_name);
  route();
}

/**
 * Exchanges a portal link; resolves true when the page should go on with the
 * session the browser now holds. A browser that holds another live session
 * (an operator's, another app's) is asked first: any page can send a browser
 * to a link of its own, and that must not silently take the person's session
 * away. The server refuses such a swap unless asked (`session_exists`).
 */
async function openPortalLink(secret, again = false) {
  const gen = generation;
  try {
    await exchangePortalLink(secret);
    return true;
  } catch (err) {
    if (err.code !== 'session_exists') {
      renderRefusal(root, err);
      return false;
    }
  }
  let current;
  try {
    current = await api('GET', '/console/api/session');
  } catch (err) {
    // The other session ended meanwhile: nothing is left to keep.
    if (err.status === 401 && !again) return openPortalLink(secret, true);
    renderFatal(err);
    return false;
  }
  if (gen !== generation) return false;
  setCsrf(current.csrf_token);
  renderSessionChoice(root, current, {
    onKeep: () => {
      history.replaceState(null, '', current.kind === 'portal' ? '/console/portal' : '/console');
      boot();
    },
    onReplace: async () => {
      try {
        await exchangePortalLink(secret, true);
      } catch (err) {
        if (err.code === 'csrf_failed' || err.code === 'session_exists') throw err;
        return renderRefusal(root, err);
      }
      setCsrf(null);
      boot();
    },
  });
  return false;
}

function renderFatal(err) {
  replace(root, el('main', { class: 'page', id: 'main' },
    el('div', { class: 'card narrow' }, el('h1', {}, 'The console cannot start'), message(err.message, 'error', 'page-error'),
      el('button', { type: 'button', class: 'btn', on: { click: () => boot() } }, 'Try again'))));
}

/** The session ended while the page was open (a /v1 call answered 401). */
onSessionLost(async () => {
  if (lostHandled) return;
  lostHandled = true;
  generation++;
  let reason = 'session_expired';
  try {
    await api('GET', '/console/api/session');
  } catch (err) {
    reason = err;
  }
  session = null;
  setCsrf(null);
  if (isPortalPath()) renderRefusal(root, reason);
  else renderLogin(root, reason, boot);
});

async function logout() {
  try {
    await api('POST', '/console/api/logout');
  } catch {
    // The session may already be gone; either way it is over for this page.
  }
  const wasPortal = session && session.kind === 'portal';
  session = null;
  setCsrf(null);
  generation++;
  history.replaceState(null, '', location.pathname);
  if (wasPortal) renderRefusal(root, 'logged_out');
  else renderLogin(root, 'logged_out', boot);
}

/** `#/apps/x/deliveries?status=failed` → {parts: ['apps','x','deliveries'], query}. */
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, qs = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  return { parts, query: new URLSearchParams(qs) };
}

function defaultHash() {
  return session.kind === 'portal' ? `#/apps/${seg(session.app_id)}/endpoints` : '#/apps';
}

/** Renders the page for the current hash inside the shell. */
async function route() {
  if (!session) return;
  const gen = ++generation;
  const { parts, query } = parseHash();
  if (parts.length === 0) {
    history.replaceState(null, '', defaultHash());
    return route();
  }
  const operatorSession = session.kind === 'operator';
  const app = parts[0] === 'apps' && parts[1] ? parts[1] : null;
  // The top bar names the app: know its name before drawing it.
  if (app && operatorSession && !appNames.has(app)) await loadAppName(app);
  if (gen !== generation || !session) return;
  const main = el('main', { class: 'page', id: 'main' });
  replace(root, header(app, parts), main);
  const ctx = {
    session,
    app,
    query,
    main,
    operator: operatorSession,
    canManage: session.access !== 'read',
    alive: () => gen === generation && session !== null,
    navigate: (hash) => { location.hash = hash; },
    refresh: () => route(),
    heading: (text, extra) => {
      const h1 = el('h1', { tabindex: '-1', testid: 'page-title' }, text);
      main.append(el('div', { class: 'page-head' }, h1, extra || null));
      if (document.activeElement === document.body || !root.contains(document.activeElement)) h1.focus();
      return h1;
    },
    appName: (id) => appNames.get(id) || id,
  };
  // A portal session sees its own app only (and the catalogue, which belongs to no app):
  // anything else is "not found", as the API would say.
  const catalogue = parts[0] === 'event-types' && parts.length === 1;
  if (!operatorSession && !catalogue && (parts[0] !== 'apps' || app !== session.app_id)) return notFound(ctx);
  try {
    if (catalogue) return await eventTypes.catalogPage(ctx);
    if (parts[0] === 'apps' && parts.length === 1) return await operator.appsPage(ctx);
    if (parts[0] === 'tokens' && parts.length === 1 && operatorSession) return await operator.tokensPage(ctx);
    if (parts[0] === 'settings' && parts.length === 1 && operatorSession) return await operator.settingsPage(ctx);
    if (parts[0] === 'portal-links' && parts.length === 1 && operatorSession) return await operator.portalLinksPage(ctx);
    if (app && parts[2] === 'endpoints' && parts.length === 3) return await endpoints.listPage(ctx);
    if (app && parts[2] === 'endpoints' && parts.length === 4) return await endpoints.detailPage(ctx, parts[3]);
    if (app && parts[2] === 'deliveries' && parts.length === 3) return await deliveries.logPage(ctx);
    if (app && parts[2] === 'deliveries' && parts.length === 4) return await deliveries.detailPage(ctx, parts[3]);
    if (app && parts.length === 2) {
      history.replaceState(null, '', `#/apps/${seg(app)}/endpoints`);
      return route();
    }
    return notFound(ctx);
  } catch (err) {
    if (!ctx.alive()) return;
    if (err.status === 401) return; // onSessionLost shows the right page.
    main.append(message(err.status === 404 ? 'Not found: this page shows nothing.' : err.message, 'error', 'page-error'));
  }
}

async function loadAppName(app) {
  try {
    const a = await api('GET', `/v1/apps/${seg(app)}`);
    appNames.set(app, a.name);
    appNames.set(a.id, a.name);
  } catch {
    // The page itself reports a missing app.
  }
}

function notFound(ctx) {
  ctx.heading('Not found');
  ctx.main.append(message('There is nothing to show at this address.', 'error', 'page-error'));
}

function navLink(label, hash, testid, current) {
  return el('a', { href: hash, class: current ? 'nav-link current' : 'nav-link', testid, 'aria-current': current ? 'page' : undefined }, label);
}

/** The top bar: who is logged in, the navigation that session may use, logout. */
function header(app, parts) {
  const links = [];
  if (session.kind === 'operator') {
    links.push(navLink('Apps', '#/apps', 'nav-apps', parts[0] === 'apps' && !app));
    links.push(navLink('Tokens', '#/tokens', 'nav-tokens', parts[0] === 'tokens'));
    links.push(navLink('Portal links', '#/portal-links', 'nav-portal-links', parts[0] === 'portal-links'));
    links.push(navLink('Settings', '#/settings', 'nav-settings', parts[0] === 'settings'));
  }
  const appLinks = [];
  // A portal session keeps its app's links on the catalogue page too.
  const navApp = app || (session.kind === 'portal' ? session.app_id : null);
  if (navApp) {
    const base = `#/apps/${seg(navApp)}`;
    appLinks.push(navLink('Endpoints', `${base}/endpoints`, 'nav-endpoints', parts[2] === 'endpoints'));
    appLinks.push(navLink('Delivery log', `${base}/deliveries`, 'nav-deliveries', parts[2] === 'deliveries'));
  }
  appLinks.push(navLink('Event types', '#/event-types', 'nav-event-types', parts[0] === 'event-types'));
  const who = session.kind === 'operator' ? 'Operator' : `${session.access === 'read' ? 'Read-only' : 'Manage'} access`;
  return el('header', { class: 'topbar' },
    el('div', { class: 'brand' }, el('span', { class: 'logo', 'aria-hidden': 'true' }, '◆'), 'Fenix'),
    el('nav', { class: 'nav', 'aria-label': 'Main', testid: 'nav' },
      links,
      navApp ? el('span', { class: 'nav-app', testid: session.kind === 'portal' ? 'portal-app' : 'current-app' }, appNames.get(navApp) || session.app_name || navApp) : null,
      appLinks),
    el('div', { class: 'who' },
      el('span', { testid: 'session-kind', 'data-kind': session.kind }, who),
      el('button', { type: 'button', class: 'btn plain', testid: 'logout', on: { click: logout } }, 'Log out')));
}

window.addEventListener('hashchange', () => {
  if (isPortalPath() && location.hash.startsWith('#fxp_')) boot();
  else route();
});
boot();
