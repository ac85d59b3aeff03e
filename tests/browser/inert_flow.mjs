// Markup in an app's name, an endpoint's description, an event's payload and a
// receiver's answer is shown as text and never runs, for the operator and in
// the portal. Each piece of markup would set window.__pwned if it ran; a CSP
// violation (an inline script or handler the page tried to add) fails the
// test too (lib.mjs).
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, ENDPOINT_ID, DELIVERY_ID, PORTAL_LINK,
//      MARKUP (JSON list of the exact strings that must show as text).
// Facts: pwned, injected, missing_text (per page).

import { env, run, tid } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');
const endpoint = env('ENDPOINT_ID');
const delivery = env('DELIVERY_ID');
const markup = JSON.parse(env('MARKUP'));

/** What a page shows of the markup: did any run, did any become elements, which strings are not visible as text. */
async function inspect(page, expect) {
  return page.evaluate(({ expect }) => {
    const text = document.body.innerText;
    return {
      pwned: window.__pwned === undefined ? null : String(window.__pwned),
      injected: document.querySelectorAll('#app img[src="x"], #app script, #app iframe, [onload], [onerror], [onclick]').length,
      missing_text: expect.filter((s) => !text.includes(s)),
    };
  }, { expect });
}

await run(async (t) => {
  const page = await t.page();
  const seen = {};
  t.step('login');
  await ui.login(page, base, env('FENIX_ADMIN_TOKEN'));

  t.step('apps list');
  await page.locator(tid('nav-apps')).click();
  await page.locator(tid('app-row')).first().waitFor();
  seen.apps = await inspect(page, [env('APP_NAME')]);

  t.step('endpoints list and endpoint page');
  await ui.openApp(page, env('APP_NAME'));
  seen.endpoints = await inspect(page, markup.filter((m) => m.startsWith('desc:')).map((m) => m.slice(5)));
  await ui.openEndpoint(page, endpoint);
  seen.endpoint = await inspect(page, markup.filter((m) => m.startsWith('desc:')).map((m) => m.slice(5)));
  await t.shot(page, 'markup-endpoint');

  t.step('delivery page with payload and response excerpt');
  await ui.openDeliveries(page);
  await ui.waitForDeliveryInLog(page, delivery, 'succeeded');
  await ui.openDelivery(page, delivery);
  const showPayload = page.locator(tid('delivery-payload-show'));
  if (await showPayload.isVisible()) await showPayload.click();
  await page.locator(tid('delivery-payload')).waitFor();
  seen.delivery = await inspect(page, markup.filter((m) => !m.startsWith('desc:')));
  await t.shot(page, 'markup-delivery');

  t.step('the same in the portal');
  const portal = await t.page();
  await portal.goto(env('PORTAL_LINK'));
  await portal.locator(tid('endpoints-list')).waitFor();
  seen.portal_endpoints = await inspect(portal, markup.filter((m) => m.startsWith('desc:')).map((m) => m.slice(5)));
  await ui.openDeliveries(portal);
  await ui.waitForDeliveryInLog(portal, delivery, 'succeeded');
  await ui.openDelivery(portal, delivery);
  const portalShow = portal.locator(tid('delivery-payload-show'));
  if (await portalShow.isVisible()) await portalShow.click();
  await portal.locator(tid('delivery-payload')).waitFor();
  seen.portal_delivery = await inspect(portal, markup.filter((m) => !m.startsWith('desc:')));
  t.fact('seen', seen);
});
