/**
 * One request to the admin API: the token, JSON both ways, Fenix's error
 * body turned into a {@link FenixError}, and retries with backoff on `429`
 * and `503` for the calls that are safe to repeat (reads, deletes, and an
 * event sent with an idempotency key).
 */

import { FenixError } from "./errors.js";

/** How a {@link Fenix} client talks to the server. */
export interface FenixOptions {
  /** An admin token (`fxa_…`) or an app token (`fxk_…`). */
  token: string;
  /** How many times a call safe to repeat is tried again after `429` or `503` (default 3). */
  maxRetries?: number;
  /** Time limit of each try, in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** A `fetch` to use instead of the global one (a proxy agent, a test double). */
  fetch?: typeof fetch;
}

/** What one call sends. */
export interface Call {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Safe to send again when the server answered 429 or 503. */
  retryable?: boolean;
}

const RETRY_STATUSES = new Set([429, 503]);
/** The first wait between tries, doubled each time (with jitter), unless the server said `Retry-After`. */
const BASE_DELAY_MS = 250;
/** A `Retry-After` longer than this is not waited for: the error goes to the caller. */
const MAX_DELAY_MS = 30_000;

/** Sends calls for one client. */
export class Transport {
  private readonly base: string;
  private readonly token: string;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(baseUrl: string, options: FenixOptions) {
    if (!options || typeof options.token !== "string" || options.token === "") {
      throw new TypeError("new Fenix(baseUrl, { token }): a token is required");
    }
    this.base = baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.maxRetries = options.maxRetries ?? 3;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Sends `call` and answers its parsed JSON body (`undefined` for `204`). */
  async request<T>(call: Call): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once<T>(call);
      } catch (error) {
        const wait = this.retryDelay(call, error, attempt);
        if (wait === null) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /** How long to wait before trying `call` again after `error`, or null to give up. */
  private retryDelay(call: Call, error: unknown, attempt: number): number | null {
    if (!call.retryable || attempt >= this.maxRetries) return null;
    if (!(error instanceof FenixError) || !RETRY_STATUSES.has(error.status)) return null;
    const backoff = BASE_DELAY_MS * 2 ** attempt * (0.5 + Math.random() / 2);
    const wait = error.retryAfter !== null ? error.retryAfter * 1000 : backoff;
    return wait > MAX_DELAY_MS ? null : wait;
  }

  private async once<T>(call: Call): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      accept: "application/json",
      ...call.headers,
    };
    let body: string | undefined;
    if (call.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(call.body);
    }
    let response: Response;
    try {
      response = await this.fetch(this.url(call), {
        method: call.method,
        headers,
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (cause) {
      const message = `${call.method} ${call.path}: no answer from Fenix (${String(cause)})`;
      throw new FenixError(0, "network_error", message, { cause });
    }
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    if (!response.ok) throw refusal(call, response, text);
    return JSON.parse(text) as T;
  }

  private url(call: Call): string {
    const url = new URL(this.base + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }
}

/** Fenix's `{"error": {"code", "message"}}` as a {@link FenixError} (or what a proxy answered instead). */
function refusal(call: Call, response: Response, text: string): FenixError {
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const error = parsed.error;
    if (error && typeof error.code === "string" && typeof error.message === "string") {
      const details = Array.isArray(error.details) ? error.details : null;
      return new FenixError(response.status, error.code, error.message, { retryAfter, details });
    }
  } catch {
    // Not Fenix's error body: said below.
  }
  const message = `${call.method} ${call.path}: HTTP ${response.status} ${text.slice(0, 200)}`;
  return new FenixError(response.status, "unexpected_response", message, { retryAfter });
}

function parseRetryAfter(value: string | null): number | null {
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  return Number(value.trim());
}

/** `encodeURIComponent` for one path segment (ids, uids, event-type names). */
export function segment(value: string): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`a path parameter must be a non-empty string`);
  return encodeURIComponent(value);
}
