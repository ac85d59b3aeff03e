// A portal link opened in a browser that holds a live session asks which to
// keep, and exchanges nothing until the person picks: an operator keeps their
// session (the link stays unused), then opens the link instead (the operator
// session ends on the server); a customer is not moved to another app's portal
// without being asked; a fresh link of the customer's own app asks nothing.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN.
// Asks: "link" {app: "acme" | "globex", access} (answer {url, id} of a fresh portal link),
//       "link-used" {app, id} (answer {used}: whether the link was exchanged).
// Facts: see t.fact calls.

import { env, run, tid, ask } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');

/** The session-choice card, once it shows: who it says holds the browser. */
async function choice(page) {
  const card = page.locator(tid('session-choice'));
  await card.waitFor();
  return {
    kind: await card.getAttribute('data-current-kind'),
    current: (await page.locator(tid('session-choice-current')).innerText()).trim(),
  };
}

/** `GET /console/api/session` sent from outside the browser with this cookie. */
async function sessionWith(cookie) {
  const r = await fetch(`${base}/console/api/session`, { headers: { cookie: `${cookie.name}=${cookie.value}` } });
  const body = await r.json().catch(() => null);
  return { status: r.status, code: body && body.error ? body.error.code : null };
}

await run(async (t) => {
  const context = await t.context();
  const page = await context.newPage();
  t.step('the operator logs in');
  await ui.login(page, base, env('FENIX_ADMIN_TOKEN'));
  const [operatorCookie] = (await context.cookies(base)).filter((c) => c.name.endsWith('fenix_session'));

  t.step("another page sends the operator's browser to a portal link");
  const acme = await ask('link', { app: 'acme', access: 'manage' });
  await page.goto(acme.url);
  const asked = await choice(page);
  t.fact('operator_choice_kind', asked.kind);
  t.fact('operator_choice_current', asked.current);
  t.fact('choice_url', page.url());
  t.fact('link_used_while_asking', (await ask('link-used', { app: 'acme', id: acme.id })).used);
  await t.shot(page, 'session-choice');

  t.step('the operator keeps their session');
  await page.locator(tid('session-choice-keep')).click();
  await page.locator(tid('nav-apps')).waitFor();
  t.fact('kept_kind', await page.locator(tid('session-kind')).getAttribute('data-kind'));
  t.fact('link_used_after_keep', (await ask('link-used', { app: 'acme', id: acme.id })).used);
  t.fact('operator_after_keep', await sessionWith(operatorCookie));

  t.step('the operator opens the link instead');
  await page.goto(acme.url);
  await choice(page);
  await page.locator(tid('session-choice-replace')).click();
  await page.locator(tid('portal-app')).waitFor();
  t.fact('portal_app_after_replace', (await page.locator(tid('portal-app')).innerText()).trim());
  t.fact('link_used_after_replace', (await ask('link-used', { app: 'acme', id: acme.id })).used);
  t.fact('operator_after_replace', await sessionWith(operatorCookie));

  t.step("another customer's link is not opened without asking");
  const globex = await ask('link', { app: 'globex', access: 'read' });
  await page.goto(globex.url);
  const customer = await choice(page);
  t.fact('customer_choice_kind', customer.kind);
  t.fact('customer_choice_current', customer.current);
  await page.locator(tid('session-choice-keep')).click();
  await page.locator(tid('endpoints-list')).waitFor();
  t.fact('portal_app_after_keep', (await page.locator(tid('portal-app')).innerText()).trim());
  t.fact('globex_link_used', (await ask('link-used', { app: 'globex', id: globex.id })).used);

  t.step("a fresh link of the customer's own app asks nothing");
  const again = await ask('link', { app: 'acme', access: 'manage' });
  await page.goto(again.url);
  await page.locator(tid('endpoints-list')).waitFor();
  t.fact('same_app_choices', await page.locator(tid('session-choice')).count());
  // The list may show before the exchange's answer came back: wait for it (up to 10 s).
  let sameAppUsed = false;
  for (let i = 0; i < 100 && !sameAppUsed; i++) {
    sameAppUsed = (await ask('link-used', { app: 'acme', id: again.id })).used;
    if (!sameAppUsed) await page.waitForTimeout(100);
  }
  t.fact('same_app_link_used', sameAppUsed);
});
