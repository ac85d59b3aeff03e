/** `fenix.deliveries`: the delivery log (one delivery per event and endpoint), its attempts, replay. */

import { walk } from "../pagination.js";
import { segment, type Transport } from "../http.js";
import type { Answer, Filters, Query } from "../types.js";

type Item = Answer<"list_deliveries", 200>["data"][number];

export class Deliveries {
  constructor(private readonly http: Transport) {}

  private path(app: string, dlv?: string, action?: string): string {
    let path = `/v1/apps/${segment(app)}/deliveries`;
    if (dlv !== undefined) path += `/${segment(dlv)}`;
    return action === undefined ? path : `${path}/${action}`;
  }

  /** One page of deliveries, newest first, filtered by `status`, `endpoint_id`, `event_type`, `since`, `until`. */
  list(app: string, query: Query<"list_deliveries"> = {}): Promise<Answer<"list_deliveries", 200>> {
    return this.http.request({ method: "GET", path: this.path(app), query, retryable: true });
  }

  /** Every delivery matching the filters, page after page. */
  listAll(app: string, query: Filters<Query<"list_deliveries">> = {}): AsyncGenerator<Item> {
    return walk((cursor) => this.list(app, { ...query, cursor }));
  }

  /** A delivery by id (`dlv_…`). */
  get(app: string, dlv: string): Promise<Answer<"get_delivery", 200>> {
    return this.http.request({ method: "GET", path: this.path(app, dlv), retryable: true });
  }

  /** Every attempt (HTTP request) of a delivery, in one page. */
  attempts(app: string, dlv: string): Promise<Answer<"list_delivery_attempts", 200>> {
    return this.http.request({ method: "GET", path: this.path(app, dlv, "attempts"), retryable: true });
  }

  /** Re-queues a `failed` or `skipped` delivery with its original event; answers it, now `pending`. */
  replay(app: string, dlv: string): Promise<Answer<"replay_delivery", 202>> {
    return this.http.request({ method: "POST", path: this.path(app, dlv, "replay") });
  }

  /** Gives up on a `failed` delivery: it becomes `skipped` (and may still be replayed). */
  skip(app: string, dlv: string): Promise<Answer<"skip_delivery", 200>> {
    return this.http.request({ method: "POST", path: this.path(app, dlv, "skip") });
  }
}
