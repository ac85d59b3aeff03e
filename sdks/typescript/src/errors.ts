/**
 * The two errors the SDK throws: {@link FenixError} for a call Fenix refused
 * (or could not be reached for), {@link WebhookVerificationError} for a
 * request a receiver must not trust.
 */

import type { ErrorCode, ErrorDetail } from "./generated/schema.js";

/**
 * A call that did not succeed. `code` is Fenix's stable, machine-readable
 * error code (`app_not_found`, `invalid_limit`, …: docs/api.md lists them):
 * branch on it, not on `message`, which is for people.
 */
export class FenixError extends Error {
  override name = "FenixError";
  /** The HTTP status; `0` when no answer came (`code` is then `network_error`). */
  readonly status: number;
  /**
   * Fenix's error code: one of the document's `ErrorCode`s, or the SDK's own
   * `network_error` (no answer) and `unexpected_response` (an answer not in
   * Fenix's error shape, from a proxy say). Any other text is a code newer than this SDK.
   */
  readonly code: ErrorCode | (string & {});
  /** Seconds to wait before trying again, from the `Retry-After` header (on 429 and 503); else null. */
  readonly retryAfter: number | null;
  /** Only with `schema_mismatch` and `example_mismatch`: where the value breaks its schema. */
  readonly details: ErrorDetail["details"];

  constructor(
    status: number,
    code: ErrorCode | (string & {}),
    message: string,
    options: { retryAfter?: number | null; details?: ErrorDetail["details"]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.retryAfter = options.retryAfter ?? null;
    this.details = options.details ?? null;
  }
}

/** Why a webhook request was refused: see {@link WebhookVerificationError.reason}. */
export type VerificationFailure = "missing_header" | "malformed_header" | "expired" | "future" | "no_match" | "malformed_body";

/**
 * A webhook request that does not verify: answer it `401` and do not act on
 * it. `reason` says which check failed: `missing_header`, `malformed_header`,
 * `expired` or `future` (the signed timestamp is more than 300 s away from
 * the receiver's clock), `no_match` (no signature matches any key held: a
 * wrong key and an altered body look the same), `malformed_body` (the signed
 * body is not a JSON object).
 */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
  readonly reason: VerificationFailure;

  constructor(reason: VerificationFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}
