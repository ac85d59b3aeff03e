// The pages shown without a session: the operator's login form, the portal
// link's exchange, the choice between a live session and a portal link, and
// the refusals (used, expired or revoked link; session ended).

import { api, ApiError } from './api.js';
import { el, field, button, message, replace } from './dom.js';

/** What each refusal code means to the person looking at the page. */
const REFUSALS = {
  link_used: ['This link has already been used', 'A portal link works once. Ask the service that sent you here for a new link.'],
  link_expired: ['This link has expired', 'Portal links are short-lived. Ask the service that sent you here for a new link.'],
  link_revoked: ['This link was revoked', 'The service that sent you here withdrew this link. Ask it for a new one.'],
  link_not_found: ['This link is not valid', 'Check that the whole link was copied, or ask for a new one.'],
  session_expired: ['Your session has expired', 'Sessions end after a while for your safety.'],
  session_revoked: ['Your session was ended', 'Access through this session was withdrawn.'],
  logged_out: ['You have logged out', 'Your session is closed.'],
  unauthorized: ['No open session', 'Open the console through a new portal link.'],
};

/**
 * The operator's login form. `reason` is an ApiError from the session check
 * (session_expired, session_revoked) or a code such as `logged_out`.
 */
export function renderLogin(root, reason, onLoggedIn) {
  const code = reason instanceof ApiError ? reason.code : reason;
  const token = field('Admin token', el('input', { type: 'password', name: 'token', autocomplete: 'current-password', required: true, spellcheck: 'false' }), {
    hint: ['An admin token (fxa_…), as printed by ', el('code', {}, 'fenix serve'), ' or ', el('code', {}, 'fenix token create'), '.'],
    testid: 'login-token',
  });
  const status = el('div', { testid: 'login-status' });
  const submit = button('Log in', null, { kind: 'primary', type: 'submit', testid: 'login-submit' });
  const form = el('form', { class: 'card narrow', testid: 'login-form', novalidate: true, on: { submit: async (e) => {
    e.preventDefault();
    replace(status);
    token.error.textContent = '';
    if (!token.input.value.trim()) {
      token.error.textContent = 'Enter an admin token.';
      token.input.focus();
      return;
    }
    submit.disabled = true;
    try {
      await api('POST', '/console/api/login', { token: token.input.value.trim() });
      token.input.value = '';
      await onLoggedIn();
    } catch (err) {
      token.error.textContent = err.status === 401
        ? 'This token is not a valid admin token (app tokens and revoked tokens cannot log in).'
        : err.message;
      token.input.focus();
    } finally {
      submit.disabled = false;
    }
  } } },
  el('h1', { tabindex: '-1' }, 'Fenix console'),
  code && REFUSALS[code] && code !== 'unauthorized' ? message(`${REFUSALS[code][0]}. Log in again.`, 'warn', 'login-reason') : null,
  token.wrap, submit, status);
  replace(root, el('main', { class: 'page page-login', id: 'main' }, form));
  token.input.focus();
}

/** A page that says why a portal link or session cannot be used, and nothing else. */
export function renderRefusal(root, reason) {
  const code = reason instanceof ApiError ? reason.code : String(reason || 'unauthorized');
  const [title, detail] = REFUSALS[code] || ['This page cannot be opened', reason instanceof ApiError ? reason.message : 'Ask for a new link.'];
  const h1 = el('h1', { tabindex: '-1', testid: 'refusal-title' }, title);
  replace(root, el('main', { class: 'page page-refusal', id: 'main' },
    el('div', { class: 'card narrow', testid: 'refusal', 'data-code': code }, h1, el('p', { testid: 'refusal-detail' }, detail))));
  h1.focus();
}

/**
 * Trades a portal link's secret for a session cookie. Resolves when the
 * session exists; rejects with the ApiError (link_used, link_expired,
 * link_revoked, link_not_found, or session_exists: this browser holds another
 * live session and `replace` was not set). `replace` is the person's choice
 * of the link over that session, which the server then ends (the request
 * carries that session's CSRF token, set by the caller).
 */
export async function exchangePortalLink(secret, replace = false) {
  await api('POST', '/console/api/portal/exchange', replace ? { link: secret, replace: true } : { link: secret });
}

/** Who a session stands for, in words. */
function describe(session) {
  if (session.kind === 'operator') return 'an operator (every app)';
  const access = session.access === 'read' ? 'read-only access' : 'manage access';
  return `${access} to ${session.app_name || session.app_id}`;
}

/**
 * This browser holds a live session and a portal link was opened: nothing is
 * exchanged until the person picks. `onKeep()` goes on with the session held
 * (the link stays unused); `onReplace()` opens the link, which ends that session.
 */
export function renderSessionChoice(root, current, { onKeep, onReplace }) {
  const status = el('div', { testid: 'session-choice-status' });
  const keep = button(current.kind === 'operator' ? 'Keep my operator session' : 'Keep my current session', null,
    { kind: 'primary', testid: 'session-choice-keep' });
  const replaceBtn = button('Open the link instead', null, { testid: 'session-choice-replace' });
  keep.addEventListener('click', () => onKeep());
  replaceBtn.addEventListener('click', async () => {
    keep.disabled = true;
    replaceBtn.disabled = true;
    replace(status);
    try {
      await onReplace();
    } catch (err) {
      status.append(message(err.message, 'error', 'session-choice-error'));
      keep.disabled = false;
      replaceBtn.disabled = false;
    }
  });
  const h1 = el('h1', { tabindex: '-1', testid: 'session-choice-title' }, 'You are already signed in here');
  replace(root, el('main', { class: 'page page-refusal', id: 'main' },
    el('div', { class: 'card narrow', testid: 'session-choice', 'data-current-kind': current.kind },
      h1,
      el('p', {}, 'This browser holds a console session for ', el('strong', { testid: 'session-choice-current' }, describe(current)), '.'),
      el('p', {}, 'The link you followed opens a customer portal. Opening it ends the session you hold now; keeping your session leaves the link unused. Open it only if you expected this link.'),
      el('div', { class: 'row-actions' }, keep, replaceBtn),
      status)));
  h1.focus();
}
