/** `fenix.portalSessions`: links that let one customer into the console for their app only. */

import { walk } from "../pagination.js";
import { segment, type Transport } from "../http.js";
import type { Answer, Body, Filters, Query } from "../types.js";

type Item = Answer<"list_portal_sessions", 200>["data"][number];

export class PortalSessions {
  constructor(private readonly http: Transport) {}

  /** A portal link: `{ access: "read" | "manage", expires_in?, label? }`; the answer's `url` is shown once. */
  create(app: string, body: Body<"create_portal_session">): Promise<Answer<"create_portal_session", 201>> {
    return this.http.request({ method: "POST", path: `/v1/apps/${segment(app)}/portal-sessions`, body });
  }

  /** One page of an app's portal links and sessions. */
  list(app: string, query: Query<"list_portal_sessions"> = {}): Promise<Answer<"list_portal_sessions", 200>> {
    const path = `/v1/apps/${segment(app)}/portal-sessions`;
    return this.http.request({ method: "GET", path, query, retryable: true });
  }

  /** Every portal link and session of an app, page after page. */
  listAll(app: string, query: Filters<Query<"list_portal_sessions">> = {}): AsyncGenerator<Item> {
    return walk((cursor) => this.list(app, { ...query, cursor }));
  }

  /** Revokes a link or session (`ps_…`) at once. */
  async revoke(app: string, ps: string): Promise<void> {
    const path = `/v1/apps/${segment(app)}/portal-sessions/${segment(ps)}`;
    await this.http.request({ method: "DELETE", path, retryable: true });
  }
}
