/** `fenix.endpoints`: where an app's events are delivered, and how. */

import { walk } from "../pagination.js";
import { segment, type Transport } from "../http.js";
import type { Answer, Body, Filters, Query } from "../types.js";

type Item = Answer<"list_endpoints", 200>["data"][number];

export class Endpoints {
  constructor(private readonly http: Transport) {}

  private path(app: string, ep?: string, action?: string): string {
    let path = `/v1/apps/${segment(app)}/endpoints`;
    if (ep !== undefined) path += `/${segment(ep)}`;
    return action === undefined ? path : `${path}/${action}`;
  }

  /**
   * Creates an endpoint: `{ url, event_types, … }`. The answer carries its
   * signing `secret` (or Ed25519 `public_key`), shown this once.
   */
  create(app: string, body: Body<"create_endpoint">): Promise<Answer<"create_endpoint", 201>> {
    return this.http.request({ method: "POST", path: this.path(app), body });
  }

  /** An endpoint by id (`ep_…`). */
  get(app: string, ep: string): Promise<Answer<"get_endpoint", 200>> {
    return this.http.request({ method: "GET", path: this.path(app, ep), retryable: true });
  }

  /** One page of an app's endpoints, newest first. */
  list(app: string, query: Query<"list_endpoints"> = {}): Promise<Answer<"list_endpoints", 200>> {
    return this.http.request({ method: "GET", path: this.path(app), query, retryable: true });
  }

  /** Every endpoint of an app, page after page. */
  listAll(app: string, query: Filters<Query<"list_endpoints">> = {}): AsyncGenerator<Item> {
    return walk((cursor) => this.list(app, { ...query, cursor }));
  }

  /** Changes the fields given (`null` clears an optional one). */
  update(app: string, ep: string, body: Body<"update_endpoint">): Promise<Answer<"update_endpoint", 200>> {
    return this.http.request({ method: "PATCH", path: this.path(app, ep), body });
  }

  /** Deletes an endpoint; its pending deliveries are dropped. */
  async delete(app: string, ep: string): Promise<void> {
    await this.http.request({ method: "DELETE", path: this.path(app, ep), retryable: true });
  }

  /** Stops deliveries to an endpoint (they wait, as `pending`) until {@link resume}. */
  pause(app: string, ep: string): Promise<Answer<"pause_endpoint", 200>> {
    return this.http.request({ method: "POST", path: this.path(app, ep, "pause") });
  }

  /** Delivers again to a paused or disabled endpoint; `{ replay_skipped: true }` re-queues what it skipped. */
  resume(app: string, ep: string, body?: Body<"resume_endpoint">): Promise<Answer<"resume_endpoint", 200>> {
    return this.http.request({ method: "POST", path: this.path(app, ep, "resume"), body });
  }

  /** A new secret (or key pair); the old one keeps signing for `overlap_seconds` (default 24 h). */
  rotateSecret(
    app: string,
    ep: string,
    body?: Body<"rotate_endpoint_secret">,
  ): Promise<Answer<"rotate_endpoint_secret", 200>> {
    return this.http.request({ method: "POST", path: this.path(app, ep, "secret/rotate"), body });
  }

  /** The endpoint's Ed25519 public keys that sign now. */
  publicKeys(app: string, ep: string): Promise<Answer<"list_endpoint_public_keys", 200>> {
    return this.http.request({ method: "GET", path: this.path(app, ep, "public-keys"), retryable: true });
  }

  /** Re-queues the endpoint's `failed` and `skipped` deliveries (or those `body` selects). */
  replay(app: string, ep: string, body?: Body<"replay_endpoint">): Promise<Answer<"replay_endpoint", 200>> {
    return this.http.request({ method: "POST", path: this.path(app, ep, "replay"), body });
  }
}
