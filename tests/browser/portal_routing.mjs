// A customer's routing in the portal: a `manage` session edits its endpoint's
// channels, filter and transformation, tests both and saves; a `read`
// session of the same app sees the saved values and no edit or test action
// (and the API refuses it a change).
// Env: FENIX_URL, MANAGE_LINK, READ_LINK, APP_ID, ENDPOINT_ID, FILTER, TRANSFORMATION, CHANNELS.
// Asks: "check-saved" (after the manage session's save).
// Facts: matched, transformed, saved, read_channels, read_filter, read_transformation,
//        read_controls, read_patch_status, markup_ran.

import { env, run, tid, ask, apiFromPage } from './lib.mjs';
import * as ui from './ui.mjs';

const form = 'endpoint-edit';
const endpoint = env('ENDPOINT_ID');

await run(async (t) => {
  t.step('the manage session edits and tests');
  const manage = await t.page();
  await manage.goto(env('MANAGE_LINK'));
  await manage.locator(tid('endpoints-list')).waitFor();
  await ui.openEndpoint(manage, endpoint);
  await ui.fillRouting(manage, form, { channels: env('CHANNELS'), filter: env('FILTER'), transformation: env('TRANSFORMATION') });
  t.fact('matched', await ui.testFilter(manage, form));
  t.fact('transformed', await ui.testTransformation(manage, form));
  await t.shot(manage, 'portal-endpoint-routing');
  t.fact('saved', await ui.saveEndpointEdit(manage));
  await ask('check-saved');

  t.step('the read session sees the values only');
  const read = await t.page();
  await read.goto(env('READ_LINK'));
  await read.locator(tid('endpoints-list')).waitFor();
  await ui.openEndpoint(read, endpoint);
  await read.waitForLoadState('networkidle');
  t.fact('read_channels', (await read.locator(tid('endpoint-channels')).innerText()).trim());
  t.fact('read_filter', (await read.locator(tid('endpoint-filter')).innerText()).trim());
  t.fact('read_transformation', (await read.locator(tid('endpoint-transformation')).innerText()).trim());
  const controls = [
    tid('endpoint-edit-form'), tid(`${form}-channels`), tid(`${form}-filter`), tid(`${form}-transformation`),
    tid(`${form}-filter-test`), tid(`${form}-transformation-test`), 'textarea', 'button:has-text("Test")',
  ];
  t.fact('read_controls', await read.locator(controls.join(', ')).count());
  t.fact('markup_ran', await ui.markupRan(read));
  await t.shot(read, 'portal-endpoint-routing-read');
  const path = `/v1/apps/${env('APP_ID')}/endpoints/${endpoint}`;
  t.fact('read_patch_status', (await apiFromPage(read, 'PATCH', path, { filter: null })).status);
});
