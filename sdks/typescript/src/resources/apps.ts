/** `fenix.apps`: the apps (one per customer of yours) that own endpoints and events. */

import { walk } from "../pagination.js";
import { segment, type Transport } from "../http.js";
import type { Answer, Body, Filters, Query } from "../types.js";

export class Apps {
  constructor(private readonly http: Transport) {}

  /** Creates an app: `{ name, uid }` (`uid` is your own id for it, usable in place of `app_…`). */
  create(body: Body<"create_app">): Promise<Answer<"create_app", 201>> {
    return this.http.request({ method: "POST", path: "/v1/apps", body });
  }

  /** An app by its id (`app_…`) or uid. */
  get(app: string): Promise<Answer<"get_app", 200>> {
    return this.http.request({ method: "GET", path: `/v1/apps/${segment(app)}`, retryable: true });
  }

  /** One page of apps, newest first. */
  list(query: Query<"list_apps"> = {}): Promise<Answer<"list_apps", 200>> {
    return this.http.request({ method: "GET", path: "/v1/apps", query, retryable: true });
  }

  /** Every app, page after page. */
  listAll(query: Filters<Query<"list_apps">> = {}): AsyncGenerator<Answer<"list_apps", 200>["data"][number]> {
    return walk((cursor) => this.list({ ...query, cursor }));
  }

  /** Changes an app's `name` or `uid`. */
  update(app: string, body: Body<"update_app">): Promise<Answer<"update_app", 200>> {
    return this.http.request({ method: "PATCH", path: `/v1/apps/${segment(app)}`, body });
  }

  /**
   * Deletes an app and everything it owns: the app answers 404 at once, and the
   * `delete_app` task answered here erases its rows in the background.
   */
  delete(app: string): Promise<Answer<"delete_app", 202>> {
    return this.http.request({ method: "DELETE", path: `/v1/apps/${segment(app)}`, retryable: true });
  }
}
