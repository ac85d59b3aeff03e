// The portal in a product's page: an iframe from an origin listed in
// FENIX_CONSOLE_FRAME_ANCESTORS shows the customer's app and works; the same
// iframe on an origin not listed is refused by the browser.
// Env: PRODUCT_URL (a page of an allowed origin that frames a portal link),
//      STRANGER_URL (the same page on an origin not allowed, framing another link).
// Facts: embedded_rows, embedded_deliveries, stranger_loaded.

import { env, run, tid } from './lib.mjs';

await run(async (t) => {
  t.step('the product frames the portal');
  const page = await t.page();
  await page.goto(env('PRODUCT_URL'));
  const frame = page.frameLocator('iframe');
  await frame.locator(tid('endpoints-list')).waitFor();
  t.fact('embedded_rows', await frame.locator(tid('endpoint-row')).count());
  await frame.locator(tid('nav-deliveries')).click();
  await frame.locator(tid('deliveries-list')).waitFor();
  t.fact('embedded_deliveries', await frame.locator(tid('delivery-row')).count());
  await t.shot(page, 'portal-embedded');

  t.step('a stranger cannot frame it');
  // Chromium logs the refusal as a console error and a CSP report: expected here.
  t.expect(/frame-ancestors/);
  const other = await t.page();
  await other.goto(env('STRANGER_URL'));
  await other.waitForLoadState('networkidle');
  const child = other.frames().find((f) => f !== other.mainFrame());
  let loaded = false;
  if (child) {
    loaded = await child
      .locator(tid('app'))
      .count()
      .catch(() => 0)
      .then((n) => n > 0);
  }
  t.fact('stranger_loaded', loaded);
});
