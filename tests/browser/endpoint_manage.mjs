// Managing one endpoint from its page: an edit the destination policy refuses
// is explained next to the URL field; an edit that passes is saved; the
// secret is rotated with a chosen overlap (the new secret shown once); the
// endpoint is deleted after a confirmation, and cancelling that confirmation
// deletes nothing.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, ENDPOINT_ID.
// Asks: "check-edit" (after the save), "deliver" (after the rotation; answer once delivered).
// Facts: edit_url_error, edit_status, rotated_secret, rows_after_cancel, rows_after_delete.

import { env, run, tid, until, ask } from './lib.mjs';
import * as ui from './ui.mjs';

const endpoint = env('ENDPOINT_ID');

await run(async (t) => {
  const page = await t.page();
  await ui.login(page, env('FENIX_URL'), env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));
  await ui.openEndpoint(page, endpoint);

  t.step('an edit the policy refuses');
  const url = page.locator(tid('endpoint-edit-url'));
  const original = await url.inputValue();
  await url.fill('http://169.254.169.254/latest/meta-data');
  await page.locator(tid('endpoint-edit-submit')).click();
  const urlError = page.locator(tid('endpoint-edit-url-error'));
  await until('an error next to the URL', async () => (await urlError.innerText()).trim() !== '');
  t.fact('edit_url_error', (await urlError.innerText()).trim());

  t.step('an edit that passes');
  await url.fill(original);
  await page.locator(tid('endpoint-edit-description')).fill('Bookings, <b>v2</b>');
  await page.locator(tid('endpoint-edit-event-types')).fill('booking.*, invoice.paid');
  await page.locator(tid('endpoint-edit-submit')).click();
  const status = page.locator(tid('endpoint-edit-status'));
  await until('the edit saved', async () => (await status.innerText()).trim() !== '');
  t.fact('edit_status', (await status.innerText()).trim());
  await ask('check-edit');

  t.step('rotate with a one-hour overlap');
  await page.locator(tid('endpoint-rotate-overlap')).selectOption('3600');
  await page.locator(tid('endpoint-rotate')).click();
  const secret = page.locator(`${tid('endpoint-rotate-status')} ${tid('endpoint-secret')}`);
  await secret.waitFor();
  t.fact('rotated_secret', ((await secret.inputValue().catch(() => '')) || (await secret.innerText())).trim());
  await t.shot(page, 'endpoint-rotated');
  await ask('deliver');

  t.step('delete: cancel first, then confirm');
  await page.locator(tid('endpoint-delete')).click();
  await page.locator(tid('confirm-cancel')).click();
  await page.locator(tid('nav-endpoints')).click();
  await page.locator(tid('endpoints-list')).waitFor();
  t.fact('rows_after_cancel', await page.locator(tid('endpoint-row')).count());
  await ui.openEndpoint(page, endpoint);
  await page.locator(tid('endpoint-delete')).click();
  await page.locator(tid('confirm-ok')).click();
  await page.locator(tid('endpoints-list')).waitFor();
  await until('the endpoint to leave the list', async () => (await page.locator(tid('endpoint-row')).count()) === 0);
  t.fact('rows_after_delete', await page.locator(tid('endpoint-row')).count());
});
