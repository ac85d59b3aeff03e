/** `fenix.eventTypes`: the event-type catalogue (descriptions, JSON Schemas checked at ingestion). */

import { walk } from "../pagination.js";
import { segment, type Transport } from "../http.js";
import type { Answer, Body, Filters, Query } from "../types.js";

type Item = Answer<"list_event_types", 200>["data"][number];

export class EventTypes {
  constructor(private readonly http: Transport) {}

  /** Adds an event type to the catalogue (admin tokens only). */
  create(body: Body<"create_event_type">): Promise<Answer<"create_event_type", 201>> {
    return this.http.request({ method: "POST", path: "/v1/event-types", body });
  }

  /** An event type by name (`booking.confirmed`). */
  get(name: string): Promise<Answer<"get_event_type", 200>> {
    return this.http.request({ method: "GET", path: `/v1/event-types/${segment(name)}`, retryable: true });
  }

  /** One page of the catalogue. */
  list(query: Query<"list_event_types"> = {}): Promise<Answer<"list_event_types", 200>> {
    return this.http.request({ method: "GET", path: "/v1/event-types", query, retryable: true });
  }

  /** The whole catalogue, page after page. */
  listAll(query: Filters<Query<"list_event_types">> = {}): AsyncGenerator<Item> {
    return walk((cursor) => this.list({ ...query, cursor }));
  }

  /** Changes the fields given. */
  update(name: string, body: Body<"update_event_type">): Promise<Answer<"update_event_type", 200>> {
    return this.http.request({ method: "PATCH", path: `/v1/event-types/${segment(name)}`, body });
  }

  /** Removes an event type from the catalogue. */
  async delete(name: string): Promise<void> {
    await this.http.request({ method: "DELETE", path: `/v1/event-types/${segment(name)}`, retryable: true });
  }
}
