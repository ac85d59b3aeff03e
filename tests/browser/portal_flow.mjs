// Portal links: two customers of different apps side by side, each seeing its
// own app only; another app's delivery URL typed by hand shows nothing of it;
// a link works once; a revoked session ends; an expired link is refused.
// Env: FENIX_URL, ACME_LINK (manage), GLOBEX_LINK (read), ACME_ENDPOINT, ACME_DELIVERY,
//      GLOBEX_APP, GLOBEX_ENDPOINT, GLOBEX_DELIVERY, GLOBEX_MARKER (a word only globex's
//      payload, name and description contain).
// Asks: "short-link" (answer {"url"} of a fresh acme link expiring in a few seconds),
//       "wait-expired" (answer once that link has expired), "revoke-acme" (the test revokes ACME_LINK).
// Facts: see t.fact calls.

import { env, run, tid, ask, apiFromPage } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');
const marker = env('GLOBEX_MARKER');
const globexApp = env('GLOBEX_APP');
const globexDelivery = env('GLOBEX_DELIVERY');
const globexEndpoint = env('GLOBEX_ENDPOINT');

/** The refusal page's code, once it shows. */
async function refusalCode(page) {
  const refusal = page.locator(tid('refusal'));
  await refusal.waitFor();
  return refusal.getAttribute('data-code');
}

/**
 * True when nothing of globex is on the page: neither the marker (in its
 * name, description and payload) nor any of its ids but those the address
 * typed names (the page may echo the address in its links).
 */
async function showsNothingOfGlobex(page, typed) {
  const text = await page.locator('body').innerText();
  const html = await page.content();
  const secret = [marker, globexApp, globexDelivery, globexEndpoint].filter((s) => !typed.includes(s));
  return !secret.some((s) => text.includes(s) || html.includes(s));
}

await run(async (t) => {
  t.step('acme opens its link');
  const acme = await t.page();
  await acme.goto(env('ACME_LINK'));
  await acme.locator(tid('portal-app')).waitFor();
  t.fact('acme_hash_after_exchange', await acme.evaluate(() => location.hash));
  t.fact('acme_url_after_exchange', acme.url());
  t.fact('acme_history_length', await acme.evaluate(() => history.length));
  await acme.locator(tid('endpoints-list')).waitFor();
  t.fact('acme_endpoint_rows', await acme.locator(tid('endpoint-row')).evaluateAll((rows) => rows.map((r) => r.dataset.id)));
  t.fact('acme_operator_nav', await acme.locator(`${tid('nav-apps')}, ${tid('nav-tokens')}, ${tid('nav-settings')}, ${tid('nav-portal-links')}`).count());
  await t.shot(acme, 'portal-endpoints');
  await ui.openDeliveries(acme);
  await ui.waitForDeliveryInLog(acme, env('ACME_DELIVERY'), 'succeeded');
  await t.shot(acme, 'portal-deliveries');

  t.step('globex opens its link beside acme');
  const globex = await t.page();
  await globex.goto(env('GLOBEX_LINK'));
  await globex.locator(tid('endpoints-list')).waitFor();
  t.fact('globex_endpoint_rows', await globex.locator(tid('endpoint-row')).evaluateAll((rows) => rows.map((r) => r.dataset.id)));
  t.fact('globex_read_can_create', await globex.locator(tid('endpoint-create-open')).count());

  t.step("acme types globex's delivery URL by hand");
  const typed = [
    ui.consoleUrl(base, `/deliveries/${globexDelivery}`, true),
    ui.consoleUrl(base, `/apps/${globexApp}/deliveries/${globexDelivery}`, true),
    ui.consoleUrl(base, `/apps/${globexApp}/endpoints/${globexEndpoint}`, false),
    ui.consoleUrl(base, `/apps/${globexApp}`, false),
  ];
  const leaks = [];
  const notFound = [];
  for (const url of typed) {
    await acme.goto(url);
    await acme.locator(tid('app')).waitFor();
    // Whatever the page settles on (a notice, the app's own pages), let its
    // requests finish before looking.
    await acme.waitForLoadState('networkidle');
    if (!(await showsNothingOfGlobex(acme, url))) leaks.push(url);
    if ((await acme.locator(tid('page-error')).count()) > 0) notFound.push(url);
  }
  t.fact('typed_url_leaks', leaks);
  t.fact('typed_urls', typed);
  t.fact('typed_url_not_found', notFound);
  await t.shot(acme, 'portal-other-app');

  t.step('the API refuses acme what is not acme');
  t.fact('api_globex_app', (await apiFromPage(acme, 'GET', `/v1/apps/${globexApp}`)).status);
  t.fact('api_globex_delivery', (await apiFromPage(acme, 'GET', `/v1/apps/${globexApp}/deliveries/${globexDelivery}`)).status);
  t.fact('api_tokens', (await apiFromPage(acme, 'GET', '/v1/tokens')).status);
  t.fact('api_apps', (await apiFromPage(acme, 'GET', '/v1/apps')).body);
  t.fact('api_settings', (await apiFromPage(acme, 'GET', '/v1/settings')).status);

  t.step('the operator pages stay closed to a portal session');
  await acme.goto(ui.consoleUrl(base, '/tokens'));
  await acme.locator(tid('app')).waitFor();
  await acme.waitForLoadState('networkidle');
  t.fact('operator_page_token_rows', await acme.locator(`${tid('token-row')}, ${tid('settings-table')}`).count());

  t.step('the link cannot be used again');
  const again = await t.page();
  await again.goto(env('ACME_LINK'));
  t.fact('reused_code', await refusalCode(again));
  t.fact('reused_text', (await again.locator(tid('refusal')).innerText()).trim());
  await t.shot(again, 'portal-link-used');

  t.step("revoking acme's link ends its session");
  await ask('revoke-acme');
  await acme.goto(ui.consoleUrl(base, '', true));
  await acme.reload();
  t.fact('revoked_code', await refusalCode(acme));
  await t.shot(acme, 'portal-session-revoked');

  t.step('an expired link is refused');
  const { url: unusedUrl } = await ask('short-link');
  await ask('wait-expired');
  const late = await t.page();
  await late.goto(unusedUrl);
  t.fact('expired_link_code', await refusalCode(late));
  await t.shot(late, 'portal-link-expired');
});
