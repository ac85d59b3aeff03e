// The top bar names the app an operator opens from the apps list (its name,
// not its id), on the first visit as on later ones.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME. Facts: first_visit, second_visit.

import { env, run, tid } from './lib.mjs';
import * as ui from './ui.mjs';

await run(async (t) => {
  const page = await t.page();
  await ui.login(page, env('FENIX_URL'), env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));
  t.fact('first_visit', (await page.locator(tid('current-app')).innerText()).trim());
  await ui.openDeliveries(page);
  t.fact('second_visit', (await page.locator(tid('current-app')).innerText()).trim());
});
