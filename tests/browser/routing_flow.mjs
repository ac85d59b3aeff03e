// An endpoint's routing, edited by the operator on its page: channels, a
// filter tested on sample events (a match, a non-match, a syntax error with
// its position) and a transformation tested (the request it makes, and an
// invalid one refused); a save the API refuses shows its message next to the
// filter; the save that passes holds all three.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, ENDPOINT_ID, FILTER, BAD_FILTER, TRANSFORMATION,
//      BAD_TRANSFORMATION, CHANNELS (as typed), NO_MATCH_DATA (JSON text).
// Asks: "check-saved" (after the save; the test reads the endpoint through the API).
// Facts: prefill_type, prefill_data, matched, not_matched, syntax_error, transformed,
//        transformation_error, save_refused, filter_invalid, saved, shown_channels, shown_filter,
//        shown_transformation, markup_ran (the transformation and its payload carry markup).

import { env, run, tid, ask } from './lib.mjs';
import * as ui from './ui.mjs';

const form = 'endpoint-edit';

await run(async (t) => {
  const page = await t.page();
  await ui.login(page, env('FENIX_URL'), env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));
  await ui.openEndpoint(page, env('ENDPOINT_ID'));

  t.step('channels and a filter, tested on the prefilled sample');
  await ui.fillRouting(page, form, { channels: env('CHANNELS'), filter: env('FILTER') });
  const prefilled = await ui.openRoutingTest(page, form, 'filter');
  t.fact('prefill_type', prefilled.type);
  t.fact('prefill_data', prefilled.data);
  t.fact('matched', await ui.testFilter(page, form));
  await t.shot(page, 'endpoint-filter-matched');

  t.step('the filter on an event it keeps out');
  t.fact('not_matched', await ui.testFilter(page, form, { data: env('NO_MATCH_DATA') }));

  t.step('a filter with a syntax error');
  await ui.fillRouting(page, form, { filter: env('BAD_FILTER') });
  t.fact('syntax_error', await ui.testFilter(page, form));
  await t.shot(page, 'endpoint-filter-error');

  t.step('a transformation, tested');
  await ui.fillRouting(page, form, { transformation: env('BAD_TRANSFORMATION') });
  t.fact('transformation_error', await ui.testTransformation(page, form));
  await ui.fillRouting(page, form, { transformation: env('TRANSFORMATION') });
  t.fact('transformed', await ui.testTransformation(page, form));
  await t.shot(page, 'endpoint-transformation-tested');

  t.step('a save the API refuses, then one it takes');
  t.fact('save_refused', await ui.saveEndpointEdit(page));
  t.fact('filter_invalid', await page.locator(tid(`${form}-filter`)).getAttribute('aria-invalid'));
  await ui.fillRouting(page, form, { filter: env('FILTER') });
  t.fact('saved', await ui.saveEndpointEdit(page));
  t.fact('shown_channels', (await page.locator(tid('endpoint-channels')).innerText()).trim());
  t.fact('shown_filter', (await page.locator(tid('endpoint-filter')).innerText()).trim());
  t.fact('shown_transformation', (await page.locator(tid('endpoint-transformation')).innerText()).trim());
  t.fact('markup_ran', await ui.markupRan(page));
  await ask('check-saved');
});
