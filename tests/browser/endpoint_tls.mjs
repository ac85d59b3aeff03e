// An endpoint with a client certificate (mTLS) and a private CA, on its page:
// the facts name the certificate and the CA (subject, expiry, "expires within
// 14 days"), the health section warns of the expiry, and no key is on the page.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, ENDPOINT_ID.
// Facts: client_certificate, ca_certificates, health_warning, page_text.

import { env, run, tid } from './lib.mjs';
import * as ui from './ui.mjs';

await run(async (t) => {
  const page = await t.page();
  await ui.login(page, env('FENIX_URL'), env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));
  await ui.openEndpoint(page, env('ENDPOINT_ID'));

  t.step('read the TLS facts and the health warning');
  t.fact('client_certificate', (await page.locator(tid('endpoint-client-certificate')).innerText()).trim());
  t.fact('ca_certificates', (await page.locator(tid('endpoint-ca-certificates')).innerText()).trim());
  const warning = page.locator(tid('health-client-certificate-expiring'));
  await warning.waitFor();
  t.fact('health_warning', (await warning.innerText()).trim());
  t.fact('page_text', await page.locator('body').innerText());
});
