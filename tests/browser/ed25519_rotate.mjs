// Rotating an Ed25519 endpoint's key from its page: the answer carries the new
// public key (never a private one), and the page shows that key.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, ENDPOINT_ID.
// Facts: rotated_key, rotated_title.

import { env, run, tid } from './lib.mjs';
import * as ui from './ui.mjs';

await run(async (t) => {
  const page = await t.page();
  await ui.login(page, env('FENIX_URL'), env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));
  await ui.openEndpoint(page, env('ENDPOINT_ID'));

  t.step('rotate an Ed25519 key');
  await page.locator(tid('endpoint-rotate')).click();
  const key = page.locator(`${tid('endpoint-rotate-status')} ${tid('endpoint-secret')}`);
  await key.waitFor();
  t.fact('rotated_key', (await key.innerText()).trim());
  t.fact('rotated_title', (await page.locator(`${tid('endpoint-rotate-status')} .secret-title`).innerText()).trim());
});
