// The delivery log and routing: filtered by channel and by tag; a delivery's
// page shows its event's channels and tags, an attempt the transformation
// failed and a delivery it cancelled, in words.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, APP_ID, CHANNEL, TAG, DELIVERY_SENT, DELIVERY_FAILED,
//      DELIVERY_CANCELLED.
// Facts: by_channel, by_tag (the ids each filter shows), sent_channels, sent_tags,
//        failed_attempts, failed_error_words, cancelled_status, cancelled_reason, cancelled_reason_code.

import { env, run, tid, until } from './lib.mjs';
import * as ui from './ui.mjs';

/** Applies the log's filter `which` ('channel' or 'tag') alone; answers the ids of the rows shown. */
async function filterBy(page, which, value) {
  await page.locator(tid('deliveries-filter-reset')).click();
  await until('the filters cleared', async () => !new URL(page.url()).hash.includes('?'));
  await page.locator(tid(`deliveries-filter-${which}`)).fill(value);
  await page.locator(tid('deliveries-filter-apply')).click();
  await until(`the log filtered by ${which}`, async () => new URL(page.url()).hash.includes(`${which}=`));
  await page.locator(`${tid('deliveries-table')}, ${tid('delivery-empty')}`).first().waitFor();
  return page.locator(tid('delivery-row')).evaluateAll((rows) => rows.map((r) => r.dataset.id).sort());
}

/** Opens a delivery by its address. */
async function openDelivery(page, id) {
  await page.goto(`${page.url().replace(/#.*/, '')}#/apps/${encodeURIComponent(env('APP_ID'))}/deliveries/${id}`);
  await page.locator(tid('delivery-detail')).waitFor();
}

await run(async (t) => {
  const page = await t.page();
  await ui.login(page, env('FENIX_URL'), env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));
  await ui.openDeliveries(page);

  t.step('the log by channel, then by tag');
  t.fact('by_channel', await filterBy(page, 'channel', env('CHANNEL')));
  await t.shot(page, 'deliveries-by-channel');
  t.fact('by_tag', await filterBy(page, 'tag', env('TAG')));

  t.step("a delivery's event: channels and tags");
  await openDelivery(page, env('DELIVERY_SENT'));
  await page.locator(tid('event-channels')).waitFor();
  t.fact('sent_channels', (await page.locator(tid('event-channels')).innerText()).trim());
  t.fact('sent_tags', (await page.locator(tid('event-tags')).innerText()).trim());

  t.step('an attempt the transformation failed');
  await openDelivery(page, env('DELIVERY_FAILED'));
  await page.locator(tid('attempt-row')).first().waitFor();
  t.fact('failed_attempts', await ui.attemptsShown(page));
  t.fact('failed_error_words', (await page.locator(tid('attempt-error-words')).first().innerText()).trim());
  await t.shot(page, 'delivery-transformation-failed');

  t.step('a delivery the transformation cancelled');
  await openDelivery(page, env('DELIVERY_CANCELLED'));
  t.fact('cancelled_status', await ui.deliveryStatus(page));
  const reason = page.locator(tid('delivery-skip-reason'));
  await reason.waitFor();
  t.fact('cancelled_reason', (await reason.innerText()).trim());
  t.fact('cancelled_reason_code', await reason.getAttribute('data-reason'));
});
