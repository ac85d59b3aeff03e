/** `fenix.tokens`: API tokens, admin (`fxa_…`) or confined to one app (`fxk_…`). */

import { walk } from "../pagination.js";
import { segment, type Transport } from "../http.js";
import type { Answer, Body, Filters, Query } from "../types.js";

type Item = Answer<"list_tokens", 200>["data"][number];

export class Tokens {
  constructor(private readonly http: Transport) {}

  /** Creates a token; the answer's `token` is shown this once. */
  create(body: Body<"create_token">): Promise<Answer<"create_token", 201>> {
    return this.http.request({ method: "POST", path: "/v1/tokens", body });
  }

  /** One page of tokens (never the tokens themselves: Fenix keeps only their hash). */
  list(query: Query<"list_tokens"> = {}): Promise<Answer<"list_tokens", 200>> {
    return this.http.request({ method: "GET", path: "/v1/tokens", query, retryable: true });
  }

  /** Every token, page after page. */
  listAll(query: Filters<Query<"list_tokens">> = {}): AsyncGenerator<Item> {
    return walk((cursor) => this.list({ ...query, cursor }));
  }

  /** Revokes a token (`tok_…`). */
  async delete(tok: string): Promise<void> {
    await this.http.request({ method: "DELETE", path: `/v1/tokens/${segment(tok)}`, retryable: true });
  }
}
