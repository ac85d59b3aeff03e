// The console at phone width (390×844) and with the keyboard only: the login
// form is reached with Tab and sent with Enter, and no page is wider than the
// screen.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, ENDPOINT_ID.
// Facts: focus_path, logged_in, overflow (per page).

import { env, run, tid, until } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');

/** How much wider than the viewport the page is (0 = fits). */
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

await run(async (t) => {
  const page = await t.page({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 1 });
  const wide = {};
  t.step('login page at phone width');
  await page.goto(ui.consoleUrl(base));
  await page.locator(tid('login-form')).waitFor();
  wide.login = await overflow(page);
  await t.shot(page, 'phone-login');

  t.step('keyboard only: Tab to the token field, type, Enter');
  // Start from the document, whatever the page focused on its own.
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  const path = [];
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => document.activeElement && (document.activeElement.dataset.testid || document.activeElement.tagName));
    path.push(id);
    if (id === 'login-token') break;
  }
  t.fact('focus_path', path);
  await page.keyboard.type(env('FENIX_ADMIN_TOKEN'));
  await page.keyboard.press('Enter');
  await page.locator(tid('nav-apps')).waitFor();
  t.fact('logged_in', true);

  t.step('pages at phone width');
  await ui.openApp(page, env('APP_NAME'));
  wide.endpoints = await overflow(page);
  await t.shot(page, 'phone-endpoints');
  await ui.openEndpoint(page, env('ENDPOINT_ID'));
  wide.endpoint = await overflow(page);
  await t.shot(page, 'phone-endpoint');
  await ui.openDeliveries(page);
  wide.deliveries = await overflow(page);
  await t.shot(page, 'phone-deliveries');
  t.fact('overflow', wide);

  t.step('the navigation works from the keyboard');
  const nav = page.locator(tid('nav-endpoints'));
  await nav.focus();
  await page.keyboard.press('Enter');
  await until('the endpoints list after Enter on the navigation', () => page.locator(tid('endpoints-list')).isVisible());
  t.fact('keyboard_nav', true);
});
