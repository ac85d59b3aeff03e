// A session that lapses while its page is open, or before the person comes
// back, ends with a page that says it expired: for a portal session (a short
// link) and for an operator (a short FENIX_CONSOLE_SESSION_TTL). The cookie
// outlives its session (by a day), so the browser still sends it and the
// server can say the session expired rather than that there is none.
// Env: FENIX_URL, and PORTAL_LINK (portal) or FENIX_ADMIN_TOKEN (operator).
// Asks: "wait-expired" (answer once the session's time is up).
// Facts: open_page_code (what the open page says on its next click), reload_code.

import { env, run, tid, ask } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');
const portal = process.env.PORTAL_LINK || '';

/** The refusal's code (portal) or the login form's reason (operator), once the page shows one. */
async function ending(page) {
  if (portal) {
    const refusal = page.locator(tid('refusal'));
    await refusal.waitFor();
    return refusal.getAttribute('data-code');
  }
  await page.locator(tid('login-form')).waitFor();
  const reason = page.locator(tid('login-reason'));
  return (await reason.count()) > 0 ? (await reason.innerText()).trim() : null;
}

await run(async (t) => {
  const context = await t.context();
  const page = await context.newPage();
  t.step('open the session');
  if (portal) {
    await page.goto(portal);
    await page.locator(tid('endpoints-list')).waitFor();
  } else {
    await ui.login(page, base, env('FENIX_ADMIN_TOKEN'));
  }

  t.step('wait until the session is over');
  await ask('wait-expired');
  if ((await context.cookies(base)).every((c) => c.name !== 'fenix_session')) {
    throw new Error('the browser dropped the session cookie with its session: the page could not say it expired');
  }

  t.step('the open page, clicked');
  await page.locator(portal ? tid('nav-deliveries') : tid('nav-tokens')).click();
  t.fact('open_page_code', await ending(page));
  await t.shot(page, portal ? 'portal-session-expired' : 'operator-session-expired');

  t.step('the page, loaded again');
  await page.goto(portal ? ui.consoleUrl(base, '', true) : ui.consoleUrl(base));
  t.fact('reload_code', await ending(page));
});
