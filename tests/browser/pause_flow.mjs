// Pause and resume with replay: the operator pauses an endpoint, events sent
// meanwhile are skipped, and "resume, replaying what was skipped" delivers them.
// Env: FENIX_URL, FENIX_ADMIN_TOKEN, APP_NAME, ENDPOINT_ID.
// Asks: "send-while-paused" (answer {"deliveries": [ids]} once they are skipped).
// Facts: paused_state, skipped_shown, resumed_state.

import { env, run, tid, ask } from './lib.mjs';
import * as ui from './ui.mjs';

const base = env('FENIX_URL');
const endpoint = env('ENDPOINT_ID');

await run(async (t) => {
  const page = await t.page();
  t.step('login');
  await ui.login(page, base, env('FENIX_ADMIN_TOKEN'));
  await ui.openApp(page, env('APP_NAME'));
  await ui.openEndpoint(page, endpoint);

  t.step('pause');
  await ui.pauseEndpoint(page);
  t.fact('paused_state', await ui.endpointState(page));
  await t.shot(page, 'endpoint-paused');

  t.step('events sent while paused are skipped');
  const { deliveries } = await ask('send-while-paused');
  await ui.openDeliveries(page);
  for (const id of deliveries) await ui.waitForDeliveryInLog(page, id, 'skipped');
  t.fact('skipped_shown', deliveries.length);

  t.step('resume, replaying what was skipped');
  await ui.openEndpoint(page, endpoint);
  await ui.resumeEndpoint(page, { replay: true });
  t.fact('resumed_state', await ui.endpointState(page));
  await ui.openDeliveries(page);
  for (const id of deliveries) await ui.waitForDeliveryInLog(page, id, 'succeeded');
});
