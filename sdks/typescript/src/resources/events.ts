/** `fenix.events`: what your product sends; Fenix delivers each to the app's matching endpoints. */

import { walk } from "../pagination.js";
import { segment, type Transport } from "../http.js";
import type { Answer, Body, Filters, Query } from "../types.js";

/** An event to send: its `type` and `data`, and optionally the idempotency key it is stored under once. */
export type SendEvent = Omit<Body<"send_event">, "id"> & {
  /** Sent as `Idempotency-Key`: a repeat answers the event first stored with it, and storing nothing. */
  idempotency_key?: string;
};

type Item = Answer<"list_events", 200>["data"][number];

export class Events {
  constructor(private readonly http: Transport) {}

  /**
   * Sends one event. With an `idempotency_key` it is safe to repeat, so it is
   * also retried on `429` and `503`.
   */
  send(app: string, event: SendEvent): Promise<Answer<"send_event", 202>> {
    const { idempotency_key, ...body } = event;
    const headers: Record<string, string> = idempotency_key === undefined ? {} : { "idempotency-key": idempotency_key };
    return this.http.request({
      method: "POST",
      path: `/v1/apps/${segment(app)}/events`,
      body,
      headers,
      retryable: idempotency_key !== undefined,
    });
  }

  /**
   * Sends many events in one request (1 to 1000 by default); each event's
   * `id`, if given, is its idempotency key. Answers one item per event, in order.
   */
  sendBatch(app: string, events: Body<"send_event_batch">["events"]): Promise<Answer<"send_event_batch", 202>> {
    return this.http.request({
      method: "POST",
      path: `/v1/apps/${segment(app)}/events/batch`,
      body: { events },
      retryable: events.every((event) => typeof event.id === "string"),
    });
  }

  /** An event by id (`evt_…`). */
  get(app: string, evt: string, query: Query<"get_event"> = {}): Promise<Answer<"get_event", 200>> {
    const path = `/v1/apps/${segment(app)}/events/${segment(evt)}`;
    return this.http.request({ method: "GET", path, query, retryable: true });
  }

  /** One page of an app's events, newest first. */
  list(app: string, query: Query<"list_events"> = {}): Promise<Answer<"list_events", 200>> {
    return this.http.request({ method: "GET", path: `/v1/apps/${segment(app)}/events`, query, retryable: true });
  }

  /** Every event of an app (with the same filters), page after page. */
  listAll(app: string, query: Filters<Query<"list_events">> = {}): AsyncGenerator<Item> {
    return walk((cursor) => this.list(app, { ...query, cursor }));
  }
}
