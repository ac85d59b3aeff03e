// What a person does in the console, as functions the scenarios call. Every
// selector of the console's pages lives here (data-testid values listed at the
// top of crates/fenix/console/app.js), so a change of the pages is a change of
// this file only.

import { tid, until } from './lib.mjs';

/** The console's URL for a route inside the single page app. */
export function consoleUrl(base, route = '', portal = false) {
  return `${base}/console${portal ? '/portal' : ''}${route ? `#${route}` : ''}`;
}

/** Logs the operator in with an admin token, with the mouse. */
export async function login(page, base, token) {
  await page.goto(consoleUrl(base));
  await page.locator(tid('login-token')).fill(token);
  await page.locator(tid('login-submit')).click();
  await page.locator(tid('nav-apps')).waitFor();
}

/** Logs out with the page's button. */
export async function logout(page) {
  await page.locator(tid('logout')).click();
  await page.locator(tid('login-form')).or(page.locator(tid('refusal'))).first().waitFor();
}

/** Creates an app on the apps page; answers its id. */
export async function createApp(page, { name, uid }) {
  await page.locator(tid('nav-apps')).click();
  await page.locator(tid('app-create-open')).click();
  await page.locator(tid('app-create-name')).fill(name);
  if (uid) await page.locator(tid('app-create-uid')).fill(uid);
  await page.locator(tid('app-create-submit')).click();
  const row = page.locator(tid('app-row')).filter({ hasText: name }).first();
  await row.waitFor();
  return row.getAttribute('data-id');
}

/** Opens an app from the apps page. */
export async function openApp(page, name) {
  await page.locator(tid('nav-apps')).click();
  await page.locator(tid('app-row')).filter({ hasText: name }).first().locator(tid('app-open')).click();
  await page.locator(tid('endpoints-list')).waitFor();
}

/**
 * Fills the create-endpoint form and submits it. Answers `{error}` (the words
 * shown next to the URL field) when the console refuses the URL, else
 * `{id, secret}` with the secret read from the page.
 */
export async function createEndpoint(page, { url, description = '' }) {
  if (!(await page.locator(tid('endpoint-create-url')).isVisible())) {
    await page.locator(tid('endpoint-create-open')).click();
  }
  await page.locator(tid('endpoint-create-url')).fill(url);
  if (description) await page.locator(tid('endpoint-create-description')).fill(description);
  await page.locator(tid('endpoint-create-submit')).click();
  const secret = page.locator(tid('endpoint-secret'));
  const error = page.locator(tid('endpoint-create-url-error'));
  await until('the new secret or an error next to the URL', async () =>
    (await secret.isVisible()) || ((await error.isVisible()) && (await error.innerText()).trim() !== ''),
  );
  if (!(await secret.isVisible())) return { error: (await error.innerText()).trim() };
  const shown = (await secret.innerText()).trim();
  const id = await page.locator(tid('endpoint-created')).getAttribute('data-id');
  return { id, secret: shown };
}

/** Opens an endpoint (by its id) from the app's endpoints list. */
export async function openEndpoint(page, id) {
  const row = page.locator(`${tid('endpoint-row')}[data-id="${id}"]`);
  if (!(await row.isVisible())) await page.locator(tid('nav-endpoints')).click();
  await row.locator(tid('endpoint-open')).click();
  await page.locator(tid('endpoint-detail')).waitFor();
}

/** On an endpoint's page: sends a test event; answers the delivery id the page shows. */
export async function sendTestEvent(page) {
  await page.locator(tid('endpoint-send-test')).click();
  const sent = page.locator(tid('test-event-sent'));
  await sent.waitFor();
  return sent.getAttribute('data-delivery-id');
}

/** The state badge of the open endpoint. */
export async function endpointState(page) {
  return (await page.locator(tid('endpoint-state')).innerText()).trim();
}

/** On an endpoint's page: pauses it (confirming). */
export async function pauseEndpoint(page) {
  await page.locator(tid('endpoint-pause')).click();
  await confirmIfAsked(page);
  await until('the endpoint shows paused', async () => (await endpointState(page)) === 'paused');
}

/** On an endpoint's page: resumes it, replaying what was skipped when `replay`. */
export async function resumeEndpoint(page, { replay }) {
  await page.locator(tid('endpoint-resume')).click();
  const box = page.locator(tid('resume-replay-skipped'));
  if (replay) await box.check();
  else if (await box.isVisible()) await box.uncheck();
  await page.locator(tid('resume-confirm')).click();
  await until('the endpoint shows active', async () => (await endpointState(page)) === 'active');
}

/** Clicks the confirm button of a dialog, when the page asks. */
export async function confirmIfAsked(page) {
  const ok = page.locator(tid('confirm-ok'));
  try {
    await ok.waitFor({ timeout: 1500 });
    await ok.click();
  } catch {
    // no confirmation asked
  }
}

/** Opens the delivery log of the current app. */
export async function openDeliveries(page) {
  await page.locator(tid('nav-deliveries')).click();
  await page.locator(tid('deliveries-list')).waitFor();
}

/** The delivery log's row for a delivery. */
export function deliveryRow(page, id) {
  return page.locator(`${tid('delivery-row')}[data-id="${id}"]`);
}

/**
 * Waits until the delivery log shows `id` with `status`, pressing the log's
 * refresh button between looks (the page does not poll by itself).
 */
export async function waitForDeliveryInLog(page, id, status) {
  await until(`delivery ${id} shown as ${status} in the log`, async () => {
    const row = deliveryRow(page, id);
    if ((await row.count()) > 0) {
      const shown = (await row.locator(tid('delivery-status')).innerText()).trim();
      if (shown === status) return true;
    }
    await page.locator(tid('deliveries-refresh')).click();
    await page.waitForTimeout(150);
    return false;
  }, 20000);
}

/** Opens a delivery from the log. */
export async function openDelivery(page, id) {
  await deliveryRow(page, id).locator(tid('delivery-open')).click();
  await page.locator(tid('delivery-detail')).waitFor();
}

/** On a delivery's page: its status. */
export async function deliveryStatus(page) {
  return (await page.locator(tid('delivery-detail-status')).innerText()).trim();
}

/** On a delivery's page: waits for `status`, pressing refresh between looks. */
export async function waitForDeliveryStatus(page, status) {
  await until(`the delivery page shows ${status}`, async () => {
    if ((await deliveryStatus(page)) === status) return true;
    await page.locator(tid('delivery-refresh')).click();
    await page.waitForTimeout(150);
    return false;
  }, 20000);
}

/** On a delivery's page: the attempts as shown (status code and error of each row). */
export async function attemptsShown(page) {
  const rows = page.locator(tid('attempt-row'));
  const out = [];
  for (let i = 0; i < (await rows.count()); i++) {
    out.push((await rows.nth(i).innerText()).replace(/\s+/g, ' ').trim());
  }
  return out;
}

/**
 * On an endpoint's form (`form`: 'endpoint-edit' or 'endpoint-create'): fills
 * its routing fields, each when given (an empty string clears it).
 */
export async function fillRouting(page, form, { channels, filter, transformation }) {
  if (channels !== undefined) await page.locator(tid(`${form}-channels`)).fill(channels);
  if (filter !== undefined) await page.locator(tid(`${form}-filter`)).fill(filter);
  if (transformation !== undefined) await page.locator(tid(`${form}-transformation`)).fill(transformation);
}

/** Opens a routing Test panel (`which`: 'filter' or 'transformation') once; answers its inputs as prefilled. */
export async function openRoutingTest(page, form, which) {
  const prefix = `${form}-${which}-test`;
  if (!(await page.locator(tid(`${prefix}-panel`)).isVisible())) await page.locator(tid(prefix)).click();
  const type = page.locator(tid(`${prefix}-type`));
  await until(`the ${which} test's sample prefilled`, async () => (await type.inputValue()) !== '');
  return { type: await type.inputValue(), data: await page.locator(tid(`${prefix}-data`)).inputValue() };
}

/** What a routing test shows: its outcome (data-outcome), text, and where an error is. */
async function routingOutcome(page, prefix) {
  const outcome = page.locator(`${tid(`${prefix}-result`)} [data-outcome]`);
  await outcome.waitFor();
  return {
    outcome: await outcome.getAttribute('data-outcome'),
    text: (await outcome.innerText()).trim(),
    line: await outcome.getAttribute('data-line'),
    column: await outcome.getAttribute('data-column'),
  };
}

/**
 * Runs the filter's Test on a sample event (the prefilled one, with what is
 * given replaced; `data` as JSON text); answers {outcome, text, line, column}.
 */
export async function testFilter(page, form, { type, data, channels, tags } = {}) {
  const prefix = `${form}-filter-test`;
  await openRoutingTest(page, form, 'filter');
  if (type !== undefined) await page.locator(tid(`${prefix}-type`)).fill(type);
  if (data !== undefined) await page.locator(tid(`${prefix}-data`)).fill(data);
  if (channels !== undefined) await page.locator(tid(`${prefix}-channels`)).fill(channels);
  if (tags !== undefined) await page.locator(tid(`${prefix}-tags`)).fill(tags);
  await page.locator(tid(`${prefix}-run`)).click();
  return routingOutcome(page, prefix);
}

/**
 * Runs the transformation's Test on a sample event; answers {outcome, text,
 * line, column} and, when it transformed, {method, url, headers, payload} as shown.
 */
export async function testTransformation(page, form, { type, data } = {}) {
  const prefix = `${form}-transformation-test`;
  await openRoutingTest(page, form, 'transformation');
  if (type !== undefined) await page.locator(tid(`${prefix}-type`)).fill(type);
  if (data !== undefined) await page.locator(tid(`${prefix}-data`)).fill(data);
  await page.locator(tid(`${prefix}-run`)).click();
  const shown = await routingOutcome(page, prefix);
  if (shown.outcome !== 'transformed') return shown;
  const text = async (id) => (await page.locator(`${tid(`${prefix}-result`)} ${tid(id)}`).innerText()).trim();
  return {
    ...shown,
    method: await text('transformation-test-method'),
    url: await text('transformation-test-url'),
    headers: await text('transformation-test-headers'),
    payload: await text('transformation-test-payload'),
  };
}

/**
 * Saves the endpoint's edit form; answers {status} (what the page says once
 * saved) or {error, field} (the words next to the field the API refused, or
 * the form's error with field null).
 */
export async function saveEndpointEdit(page) {
  await page.locator(tid('endpoint-edit-submit')).click();
  const form = page.locator(tid('endpoint-edit-form'));
  const said = async () => {
    const status = (await page.locator(tid('endpoint-edit-status')).innerText()).trim();
    if (status) return { status };
    for (const f of ['url', 'description', 'event-types', 'rate', 'channels', 'filter', 'transformation']) {
      const e = form.locator(tid(`endpoint-edit-${f}-error`));
      const text = (await e.innerText().catch(() => '')).trim();
      if (text) return { error: text, field: f };
    }
    const error = (await page.locator(tid('endpoint-edit-error')).innerText()).trim();
    return error ? { error, field: null } : null;
  };
  return until('the edit saved or refused', said);
}

/** Whether markup put into the page ran (window.__pwned) or became elements. */
export async function markupRan(page) {
  return page.evaluate(() => ({
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    injected: document.querySelectorAll('#app img[src="x"], #app script, [onerror], [onload]').length,
  }));
}

/** The delivery log's Tasks section (tasks.js): waits for it and its list. */
export async function openTasks(page) {
  await openDeliveries(page);
  await page.locator(tid('tasks-section')).waitFor();
  await page.locator(`${tid('tasks-table')}, ${tid('tasks-empty')}`).first().waitFor();
}

/**
 * Fills the task form: `kind`, `statuses` (the boxes to tick, the others
 * unticked), `endpoint` (an id, '' for any), `statusClass`, `eventTypes`,
 * `since` and `until` (datetime-local values), each when given.
 */
export async function fillTaskForm(page, { kind, statuses, endpoint, statusClass, eventTypes, since, until }) {
  if (kind !== undefined) await page.locator(tid('task-kind')).selectOption(kind);
  if (statuses !== undefined) {
    const boxes = page.locator(tid('task-status'));
    for (let i = 0; i < (await boxes.count()); i++) {
      const box = boxes.nth(i);
      await box.setChecked(statuses.includes(await box.getAttribute('data-status')));
    }
  }
  if (endpoint !== undefined) await page.locator(tid('task-endpoint')).selectOption(endpoint);
  if (statusClass !== undefined) await page.locator(tid('task-status-class')).selectOption(statusClass);
  if (eventTypes !== undefined) await page.locator(tid('task-event-types')).fill(eventTypes);
  if (since !== undefined) await page.locator(tid('task-since')).fill(since);
  if (until !== undefined) await page.locator(tid('task-until')).fill(until);
}

/** Presses Count; answers {count, text} as shown, or {error, field} when the API refused the filter. */
export async function countTask(page) {
  await page.locator(tid('task-count')).click();
  return until('the dry run counted or refused', async () => {
    const shown = page.locator(tid('task-count-text'));
    if (await shown.isVisible()) return { count: await shown.getAttribute('data-count'), text: (await shown.innerText()).trim() };
    for (const f of ['kind', 'statuses', 'endpoint', 'status-class', 'event-types', 'since', 'until']) {
      const e = page.locator(tid(`task-${f}-error`));
      const text = (await e.innerText().catch(() => '')).trim();
      if (text) return { error: text, field: f };
    }
    const error = (await page.locator(tid('task-form-error')).innerText()).trim();
    return error ? { error, field: null } : null;
  });
}

/** Presses Start (after a count); answers the new task's id. */
export async function startTask(page) {
  await page.locator(tid('task-start')).click();
  const started = page.locator(tid('task-started'));
  await started.waitFor();
  return started.getAttribute('data-id');
}

/** The Tasks list's row of a task. */
export function taskRow(page, id) {
  return page.locator(`${tid('task-row')}[data-id="${id}"]`);
}

/** A task as its row shows it: {state, value, max, text} (the progress bar's value and max). */
export async function taskShown(page, id) {
  const row = taskRow(page, id);
  const bar = row.locator(tid('task-progress'));
  return {
    state: (await row.locator(tid('task-state')).innerText()).trim(),
    value: await bar.evaluate((b) => b.value),
    max: await bar.evaluate((b) => b.max),
    text: (await row.locator(tid('task-progress-text')).innerText()).trim(),
  };
}
