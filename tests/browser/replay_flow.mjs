// A failing receiver leaves two deliveries failed; the operator finds them with
// the log's status filter, replays one from its page and, once the receiver is
// fixed, sees it succeed; then replays the endpoint's other failed delivery in
// bulk from the endpoint's page.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, ENDPOINT_ID, FIRST_DELIVERY, SECOND_DELIVERY
// (both failed before the script starts). Asks: "fix-receiver".
// Facts: failed_rows, failed_row_text (the first failed row's cells), attempts_before, attempts_after.

import { env, run, tid, ask, until } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');
const first = env('FIRST_DELIVERY');
const second = env('SECOND_DELIVERY');

await run(async (t) => {
  const page = await t.page();
  t.step('login');
  await ui.login(page, base, env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));

  t.step('filter the log on failed deliveries');
  await ui.openDeliveries(page);
  await page.locator(tid('deliveries-filter-status')).selectOption('failed');
  await page.locator(tid('deliveries-filter-apply')).click();
  await ui.waitForDeliveryInLog(page, first, 'failed');
  await ui.waitForDeliveryInLog(page, second, 'failed');
  const rows = page.locator(tid('delivery-row'));
  const statuses = [];
  for (let i = 0; i < (await rows.count()); i++) {
    statuses.push((await rows.nth(i).locator(tid('delivery-status')).innerText()).trim());
  }
  t.fact('failed_rows', statuses);
  t.fact('failed_row_text', (await rows.first().innerText()).replace(/\s+/g, ' ').trim());
  await t.shot(page, 'deliveries-failed');

  t.step('open the failed delivery');
  await ui.openDelivery(page, first);
  t.fact('attempts_before', await ui.attemptsShown(page));
  await t.shot(page, 'delivery-failed');

  t.step('replay it once the receiver is fixed');
  await ask('fix-receiver');
  await page.locator(tid('delivery-replay')).click();
  await ui.confirmIfAsked(page);
  await ui.waitForDeliveryStatus(page, 'succeeded');
  // The status and the attempts are drawn from two answers: wait for the list too.
  await until('the replay\'s attempt to be listed', async () => {
    if ((await ui.attemptsShown(page)).length >= 3) return true;
    await page.locator(tid('delivery-refresh')).click();
    await page.waitForTimeout(150);
    return false;
  }, 20000);
  t.fact('attempts_after', await ui.attemptsShown(page));

  t.step("replay the endpoint's failed deliveries in bulk");
  await ui.openEndpoint(page, env('ENDPOINT_ID'));
  await page.locator(tid('endpoint-replay-failed')).click();
  await ui.confirmIfAsked(page);
  await page.locator(tid('endpoint-replayed')).waitFor();
  t.fact('bulk_message', (await page.locator(tid('endpoint-replayed')).innerText()).trim());
  await ui.openDeliveries(page);
  await ui.waitForDeliveryInLog(page, second, 'succeeded');
});
