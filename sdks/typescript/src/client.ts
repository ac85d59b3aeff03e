/** {@link Fenix}: the admin API client, one property per resource. */

import { Transport, type FenixOptions } from "./http.js";
import { Apps } from "./resources/apps.js";
import { Deliveries } from "./resources/deliveries.js";
import { Endpoints } from "./resources/endpoints.js";
import { EventTypes } from "./resources/event_types.js";
import { Events } from "./resources/events.js";
import { PortalSessions } from "./resources/portal_sessions.js";
import { Tokens } from "./resources/tokens.js";

/**
 * A client of one Fenix server:
 *
 * ```ts
 * const fenix = new Fenix("http://127.0.0.1:8080", { token: process.env.FENIX_TOKEN! });
 * const app = await fenix.apps.create({ name: "Acme", uid: "acme" });
 * ```
 *
 * Every method answers the API's JSON as a typed object, or throws a
 * {@link FenixError}.
 */
export class Fenix {
  readonly apps: Apps;
  readonly endpoints: Endpoints;
  readonly events: Events;
  readonly deliveries: Deliveries;
  readonly eventTypes: EventTypes;
  readonly portalSessions: PortalSessions;
  readonly tokens: Tokens;

  constructor(baseUrl: string, options: FenixOptions) {
    const http = new Transport(baseUrl, options);
    this.apps = new Apps(http);
    this.endpoints = new Endpoints(http);
    this.events = new Events(http);
    this.deliveries = new Deliveries(http);
    this.eventTypes = new EventTypes(http);
    this.portalSessions = new PortalSessions(http);
    this.tokens = new Tokens(http);
  }
}
