// The operator-only pages: tokens (create one for an app, see it once, revoke
// it; create an admin token), portal links (create, see the link once, revoke),
// settings in force with secrets redacted. And the login form's hint as read.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, SECRETS (JSON list of values that must never show).
// Facts: login_form, token, token_rows_after_revoke, admin_token, admin_token_app_hidden, portal_link,
// settings_text_has_secret, settings (key → row text).

import { env, run, tid, until } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');
const secrets = JSON.parse(env('SECRETS'));

await run(async (t) => {
  const page = await t.page();
  t.step('login');
  await page.goto(ui.consoleUrl(base));
  await page.locator(tid('login-form')).waitFor();
  t.fact('login_form', (await page.locator(tid('login-form')).innerText()).trim());
  await ui.login(page, base, env('FENIX_ADMIN_TOKEN'));

  t.step('tokens: create an app token');
  await page.locator(tid('nav-tokens')).click();
  await page.locator(tid('tokens-list')).waitFor();
  await page.locator(tid('token-create-name')).fill('acme-ci');
  await page.locator(tid('token-create-app')).selectOption({ label: env('APP_NAME') }).catch(async () => {
    await page.locator(tid('token-create-app')).fill(env('APP_NAME'));
  });
  await page.locator(tid('token-create-access')).selectOption('read');
  await page.locator(tid('token-create-submit')).click();
  const shown = page.locator(tid('token-secret'));
  await shown.waitFor();
  t.fact('token', (await shown.innerText()).trim());
  await t.shot(page, 'tokens');
  const done = page.locator(tid('token-secret-done'));
  if (await done.isVisible()) await done.click();

  t.step('tokens: revoke it');
  const row = page.locator(tid('token-row')).filter({ hasText: 'acme-ci' });
  await row.locator(tid('token-revoke')).click();
  await ui.confirmIfAsked(page);
  await until('the revoked token to leave the list', async () => (await row.count()) === 0);
  t.fact('token_rows_after_revoke', await page.locator(tid('token-row')).count());

  t.step('tokens: create an admin token');
  await page.locator(tid('token-create-name')).fill('ops-admin');
  await page.locator(tid('token-create-access')).selectOption('admin');
  t.fact('admin_token_app_hidden', !(await page.locator(tid('token-create-app')).isVisible()));
  await page.locator(tid('token-create-submit')).click();
  await until('the admin token to be shown', async () => (await shown.count()) > 0 && (await shown.innerText()).includes('fxa_'));
  t.fact('admin_token', (await shown.innerText()).trim());
  if (await done.isVisible()) await done.click();

  t.step('portal links: create one');
  await page.locator(tid('nav-portal-links')).click();
  await page.locator(tid('portal-links-list')).waitFor();
  await page.locator(tid('portal-link-create-app')).selectOption({ label: env('APP_NAME') }).catch(async () => {
    await page.locator(tid('portal-link-create-app')).fill(env('APP_NAME'));
  });
  await page.locator(tid('portal-link-create-access')).selectOption('read');
  await page.locator(tid('portal-link-create-submit')).click();
  const link = page.locator(tid('portal-link-url'));
  await link.waitFor();
  t.fact('portal_link', (await link.innerText()).trim() || (await link.inputValue().catch(() => '')));
  await t.shot(page, 'portal-links');

  t.step('settings: in force, secrets redacted');
  await page.locator(tid('nav-settings')).click();
  const table = page.locator(tid('settings-table'));
  await table.waitFor();
  const text = await page.locator('body').innerText();
  t.fact('settings_text_has_secret', secrets.filter((s) => text.includes(s)));
  t.fact('settings', await page.locator(tid('setting-row')).evaluateAll((rows) =>
    Object.fromEntries(rows.map((r) => [r.dataset.key, r.innerText.replace(/\s+/g, ' ').trim()]))));
  await t.shot(page, 'settings');
});
