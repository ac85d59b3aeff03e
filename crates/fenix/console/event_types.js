// The event-type catalogue, read-only: what each event type means, the JSON
// Schema its data must match and an example, for operators and for customers
// (portal sessions) alike. `GET /v1/event-types` is readable by every session;
// the catalogue is written through the API by admins. Schemas and examples are
// shown as pretty-printed text (textContent), never as markup.

import { api, items } from './api.js';
import { el, badge, message } from './dom.js';

const pretty = (value) => JSON.stringify(value, null, 2);

/** One catalogued type as a card. */
function typeCard(t) {
  return el('section', { class: 'card event-type', testid: 'event-type', 'data-name': t.name },
    el('h2', {}, el('code', { testid: 'event-type-name' }, t.name), ' ',
      t.deprecated ? badge('deprecated', 'event-type-deprecated') : null),
    t.description
      ? el('p', { class: 'prewrap', testid: 'event-type-description' }, t.description)
      : el('p', { class: 'muted', testid: 'event-type-description' }, 'No description.'),
    el('h3', {}, 'Schema'),
    t.schema === null || t.schema === undefined
      ? el('p', { class: 'muted', testid: 'event-type-schema' }, 'No schema: any JSON object is accepted as data.')
      : el('pre', { testid: 'event-type-schema' }, pretty(t.schema)),
    el('h3', {}, 'Example data'),
    t.example === null || t.example === undefined
      ? el('p', { class: 'muted', testid: 'event-type-example' }, 'No example.')
      : el('pre', { testid: 'event-type-example' }, pretty(t.example)));
}

/** `#/event-types`: the catalogue, a page at a time (newest first). */
export async function catalogPage(ctx) {
  ctx.heading('Event types');
  ctx.main.append(el('p', {}, 'The event types this service sends, with the schema each event\'s data matches. Read-only.'));
  const list = el('div', { testid: 'event-types-list' });
  const more = el('div', {});
  ctx.main.append(list, more);
  const load = async (cursor) => {
    const answer = await api('GET', `/v1/event-types?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (!ctx.alive()) return;
    const types = items(answer);
    if (!cursor && types.length === 0) {
      list.append(message('No event types are catalogued yet.', 'info', 'event-types-empty'));
    }
    list.append(...types.map(typeCard));
    more.replaceChildren();
    if (answer && answer.next_cursor) {
      more.append(el('button', {
        type: 'button', class: 'btn', testid: 'event-types-next',
        on: { click: () => load(answer.next_cursor).catch((err) => more.append(message(err.message, 'error'))) },
      }, 'Show more'));
    }
  };
  await load(null);
}
