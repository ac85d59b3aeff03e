// An operator logs in, creates an app and an endpoint, copies the secret,
// sends a test event and sees it succeed in the delivery log.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, RECEIVER_URL.
// Facts: app_id, endpoint_id, secret, clipboard, delivery_id, url_error,
//        wrong_token_error, csrf_status, csrf_code, attempts.

import { env, run, tid, until, apiFromPage } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');
const token = env('FENIX_ADMIN_TOKEN');
const receiver = env('RECEIVER_URL');

await run(async (t) => {
  const context = await t.context();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();

  t.step('login page');
  await page.goto(ui.consoleUrl(base));
  await page.locator(tid('login-form')).waitFor();
  await t.shot(page, 'login');

  t.step('a wrong token is refused in words');
  await page.locator(tid('login-token')).fill('fxa_not_a_real_token_0000000000');
  await page.locator(tid('login-submit')).click();
  const tokenError = page.locator(tid('login-token-error'));
  await until('an error next to the token field', async () => (await tokenError.innerText()).trim() !== '');
  t.fact('wrong_token_error', (await tokenError.innerText()).trim());

  t.step('login');
  await page.locator(tid('login-token')).fill(token);
  await page.locator(tid('login-submit')).click();
  await page.locator(tid('nav-apps')).waitFor();

  t.step('a state change without the CSRF header is refused');
  const forged = await page.evaluate(async () => {
    const r = await fetch('/v1/apps', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'forged' }),
    });
    return { status: r.status, body: await r.json().catch(() => null) };
  });
  t.fact('csrf_status', forged.status);
  t.fact('csrf_code', forged.body && forged.body.error ? forged.body.error.code : null);

  t.step('create an app');
  const appId = await ui.createApp(page, { name: 'Acme Travel', uid: 'acme' });
  t.fact('app_id', appId);
  await t.shot(page, 'apps');
  await ui.openApp(page, 'Acme Travel');

  t.step('a URL the policy refuses is explained next to the field');
  const refused = await ui.createEndpoint(page, { url: 'ftp://example.invalid/hook' });
  t.fact('url_error', refused.error || null);

  t.step('create an endpoint');
  const created = await ui.createEndpoint(page, { url: receiver, description: 'Booking service' });
  if (!created.secret) throw new Error(`the endpoint was not created: ${created.error}`);
  t.fact('endpoint_id', created.id);
  t.fact('secret', created.secret);
  await t.shot(page, 'endpoint-created');

  t.step('copy the secret');
  await page.locator(tid('endpoint-secret-copy')).click();
  t.fact('clipboard', await page.evaluate(() => navigator.clipboard.readText()));
  const dismiss = page.locator(tid('endpoint-secret-done'));
  if (await dismiss.isVisible()) await dismiss.click();
  await t.shot(page, 'endpoints');

  t.step('send a test event');
  await ui.openEndpoint(page, created.id);
  const deliveryId = await ui.sendTestEvent(page);
  t.fact('delivery_id', deliveryId);

  t.step('see it succeed in the log');
  await ui.openDeliveries(page);
  await ui.waitForDeliveryInLog(page, deliveryId, 'succeeded');
  await t.shot(page, 'deliveries');
  await ui.openDelivery(page, deliveryId);
  t.fact('attempts', await ui.attemptsShown(page));
  t.fact('payload_shown', (await page.locator(tid('delivery-payload')).innerText()).trim());
  await t.shot(page, 'delivery');

  t.step('the endpoint page draws its health chart');
  await ui.openEndpoint(page, created.id);
  const chart = page.locator(tid('endpoint-health-chart'));
  await chart.waitFor();
  t.fact('chart_tag', await chart.evaluate((n) => n.tagName.toLowerCase()));
  t.fact('health_text', (await page.locator(tid('endpoint-health')).innerText()).replace(/\s+/g, ' ').trim());
  await t.shot(page, 'endpoint');
  await page.locator(tid('endpoint-health')).scrollIntoViewIfNeeded();
  await t.shot(page, 'endpoint-health');

  t.step('logout ends the session');
  await ui.logout(page);
  const after = await apiFromPage(page, 'GET', '/v1/apps');
  t.fact('after_logout_status', after.status);
});
