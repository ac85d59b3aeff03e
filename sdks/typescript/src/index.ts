/**
 * fenix-sdk: a typed client for the Fenix admin API ({@link Fenix}), and
 * webhook verification for receivers ({@link Webhook}). The request and
 * answer types are generated from the server's OpenAPI document
 * (src/generated/schema.ts) and exported here by their schema names.
 */

export { Fenix } from "./client.js";
export type { FenixOptions } from "./http.js";
export { FenixError, WebhookVerificationError, type VerificationFailure } from "./errors.js";
export { Webhook, TOLERANCE_SECONDS, type WebhookEvent, type WebhookHeaders, type VerifyOptions } from "./webhook.js";
export type { Page, Body, Query, Answer } from "./types.js";
export type { SendEvent } from "./resources/events.js";
export type * from "./generated/schema.js";
