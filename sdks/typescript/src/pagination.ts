/** Walking every page of a list by its `next_cursor`. */

import type { Page } from "./types.js";

/**
 * Every item of a list, page after page, as an async iterator: `fetchPage`
 * gets one page given the cursor (undefined for the first), and the walk
 * ends on the page whose `next_cursor` is null.
 */
export async function* walk<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}
