// An app's tasks, from the delivery log: a refused filter is explained next to
// its field; the operator counts a replay of one endpoint's 5xx failures (a
// dry run), starts it once the receiver is fixed, and follows its progress bar
// to the end and the state "succeeded" without touching the page, which then
// stops asking; then counts and starts a replay of the 4xx failures and
// cancels it while it runs. A customer's read-only portal session sees the
// tasks, with neither the form nor a Cancel button.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, READ_LINK (a read portal link of the app),
// FAILING_ENDPOINT (4 deliveries
// failed with 500; 20 more failed with 404 at another endpoint; tasks run at
// 2 deliveries a second). Asks: "fix-receiver".
// Facts: until_error, start_before_count, replay_count, replay_count_text, replay_task,
// replay_progress (every distinct {value, max, state} seen), replay_progress_text,
// polls_after_end, cancel_count, cancel_task, cancelled_state, cancelled_value,
// cancel_button_after, read_rows, read_states, read_forms, read_cancel_buttons.

import { env, run, tid, ask, until } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');

await run(async (t) => {
  const page = await t.page();
  // The list's own requests, to see it stop asking once no task is active.
  const polls = [];
  page.on('request', (r) => {
    if (r.method() === 'GET' && /\/v1\/apps\/[^/]+\/tasks\?/.test(r.url())) polls.push(Date.now());
  });
  t.step('login');
  await ui.login(page, base, env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));
  await ui.openTasks(page);

  t.step('a refused filter, in words');
  await ui.fillTaskForm(page, { since: '2026-03-02T10:00', until: '2026-03-01T10:00' });
  const refused = await ui.countTask(page);
  if (refused.field !== 'until') throw new Error(`expected an error at until, got ${JSON.stringify(refused)}`);
  t.fact('until_error', refused.error);
  await ui.fillTaskForm(page, { since: '', until: '' });

  t.step('count the 5xx failures of one endpoint');
  await ui.fillTaskForm(page, { kind: 'replay', statuses: ['failed'], endpoint: env('FAILING_ENDPOINT'), statusClass: '5xx' });
  t.fact('start_before_count', await page.locator(tid('task-start')).isDisabled());
  const counted = await ui.countTask(page);
  t.fact('replay_count', counted.count);
  t.fact('replay_count_text', counted.text);
  await page.locator(tid('task-form')).scrollIntoViewIfNeeded();
  await t.shot(page, 'tasks-counted');

  t.step('start the replay and follow it');
  await ask('fix-receiver');
  const replay = await ui.startTask(page);
  t.fact('replay_task', replay);
  const seen = [];
  const final = await until('the replay succeeded, shown by the page itself', async () => {
    const now = await ui.taskShown(page, replay);
    const last = seen[seen.length - 1];
    if (!last || last.value !== now.value || last.max !== now.max || last.state !== now.state) {
      seen.push({ value: now.value, max: now.max, state: now.state });
    }
    return now.state === 'succeeded' && now;
  }, 30000);
  t.fact('replay_progress', seen);
  t.fact('replay_progress_text', final.text);
  await ui.taskRow(page, replay).scrollIntoViewIfNeeded();
  await t.shot(page, 'tasks-succeeded');

  t.step('the list stops asking');
  const ended = polls.length;
  await page.waitForTimeout(3000);
  t.fact('polls_after_end', polls.length - ended);

  t.step('count and start the 4xx replay');
  await ui.fillTaskForm(page, { statuses: ['failed', 'skipped'], endpoint: '', statusClass: '4xx' });
  const second = await ui.countTask(page);
  t.fact('cancel_count', second.count);
  const cancelling = await ui.startTask(page);
  t.fact('cancel_task', cancelling);

  t.step('cancel it while it runs');
  await until('the task is running, a part done', async () => {
    const now = await ui.taskShown(page, cancelling);
    return now.state === 'running' && now.value > 0;
  }, 30000);
  await ui.taskRow(page, cancelling).locator(tid('task-cancel')).click();
  await page.locator(tid('task-cancelled')).waitFor();
  const stopped = await until('the task shows cancelled', async () => {
    const now = await ui.taskShown(page, cancelling);
    return now.state === 'cancelled' && now;
  });
  t.fact('cancelled_state', stopped.state);
  t.fact('cancelled_value', String(stopped.value));
  t.fact('cancel_button_after', await ui.taskRow(page, cancelling).locator(tid('task-cancel')).count());
  await ui.taskRow(page, cancelling).scrollIntoViewIfNeeded();
  await t.shot(page, 'tasks-cancelled');

  t.step('a read-only portal session sees the tasks');
  const customer = await t.page();
  await customer.goto(env('READ_LINK'));
  await customer.locator(tid('endpoints-list')).waitFor();
  await ui.openTasks(customer);
  const rows = customer.locator(tid('task-row'));
  await until('both tasks listed', async () => (await rows.count()) === 2);
  t.fact('read_rows', await rows.evaluateAll((r) => r.map((x) => x.dataset.id)));
  t.fact('read_states', await rows.evaluateAll((r) => r.map((x) => x.dataset.state)));
  t.fact('read_forms', await customer.locator(tid('task-form')).count());
  t.fact('read_cancel_buttons', await customer.locator(tid('task-cancel')).count());
});
