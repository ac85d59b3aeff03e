/**
 * {@link Webhook}: verifying, in a receiver, that a request comes from Fenix
 * (docs/receiving.md). Both schemes (`fenix-v1`, Standard Webhooks), both
 * algorithms (HMAC-SHA256 with a `whsec_` secret, Ed25519 with a `whpk_`
 * public key), several signatures in one header during a rotation, a 300 s
 * tolerance on the signed timestamp, constant-time comparison.
 */

import { createHmac, createPublicKey, timingSafeEqual, verify as verifySignature, type KeyObject } from "node:crypto";

import { WebhookVerificationError } from "./errors.js";

/** The envelope Fenix delivers: `data` is what the producer sent. */
export interface WebhookEvent<T = unknown> {
  id: string;
  type: string;
  created_at: string;
  data: T;
}

/** Request headers as a `Headers`, or a plain object (Node's `req.headers`, any case of names). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** The receiver's clock, unix seconds (default: now). */
  now?: number;
}

/** The largest gap, either way, between the signed timestamp and the receiver's clock. */
export const TOLERANCE_SECONDS = 300;

type Key =
  | { kind: "hmac"; fenixKey: Buffer; standardKey: Buffer }
  | { kind: "ed25519"; publicKey: KeyObject };

/** What one request claims: the scheme's signed message and the signatures in its header. */
interface Signed {
  scheme: "fenix-v1" | "standard-webhooks";
  timestamp: string;
  message: Buffer;
  /** `[version, value]` pairs: `v1` HMACs, `v1a` Ed25519 signatures. */
  signatures: Array<[string, string]>;
}

/** A receiver's verifier for one endpoint's secret(s) or public key(s). */
export class Webhook {
  private readonly keys: Key[];

  /**
   * `secretOrPublicKey`: the endpoint's `whsec_…` secret or `whpk_…` Ed25519
   * public key; during a rotation, several (any one that matches will do).
   */
  constructor(secretOrPublicKey: string | string[]) {
    const all = Array.isArray(secretOrPublicKey) ? secretOrPublicKey : [secretOrPublicKey];
    if (all.length === 0) throw new WebhookVerificationError("invalid_key", "no secret or public key given");
    this.keys = all.map(parseKey);
  }

  /**
   * Checks the request and answers its parsed event; throws
   * {@link WebhookVerificationError} when it must not be trusted. `rawBody`
   * is the body exactly as received: verify before parsing it.
   */
  verify<T = unknown>(rawBody: string | Uint8Array, headers: WebhookHeaders, options: VerifyOptions = {}): WebhookEvent<T> {
    const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody);
    const signed = readSigned(body, header(headers));
    const now = options.now ?? Math.floor(Date.now() / 1000);
    const age = now - Number(signed.timestamp);
    if (age > TOLERANCE_SECONDS) throw new WebhookVerificationError("expired", "the signed timestamp is too old");
    if (age < -TOLERANCE_SECONDS) throw new WebhookVerificationError("future", "the signed timestamp is in the future");
    if (!this.keys.some((key) => matches(key, signed))) {
      throw new WebhookVerificationError("no_matching_signature", "no signature matches the key(s) given");
    }
    try {
      return JSON.parse(body.toString("utf8")) as WebhookEvent<T>;
    } catch {
      throw new WebhookVerificationError("invalid_body", "the signed body is not JSON");
    }
  }
}

function parseKey(text: string): Key {
  const base64 = /^[A-Za-z0-9+/]+={0,2}$/;
  if (text.startsWith("whsec_") && base64.test(text.slice(6))) {
    const standardKey = Buffer.from(text.slice(6), "base64");
    return { kind: "hmac", fenixKey: Buffer.from(text, "utf8"), standardKey };
  }
  if (text.startsWith("whpk_") && base64.test(text.slice(5))) {
    const raw = Buffer.from(text.slice(5), "base64");
    if (raw.length === 32) {
      const jwk = { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") };
      return { kind: "ed25519", publicKey: createPublicKey({ key: jwk, format: "jwk" }) };
    }
  }
  throw new WebhookVerificationError("invalid_key", "a key is `whsec_` + base64, or `whpk_` + base64 of 32 bytes");
}

/** A header by its lower-case name, whatever the case or shape it was given in. */
function header(headers: WebhookHeaders): (name: string) => string | undefined {
  if (typeof (headers as Headers).get === "function" && typeof (headers as Headers).has === "function") {
    return (name) => (headers as Headers).get(name) ?? undefined;
  }
  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value !== undefined) lower.set(name.toLowerCase(), Array.isArray(value) ? value.join(", ") : value);
  }
  return (name) => lower.get(name);
}

/** The scheme is told by its headers: `webhook-*` (Standard Webhooks) or `X-Fenix-*`. */
function readSigned(body: Buffer, get: (name: string) => string | undefined): Signed {
  const standard = get("webhook-signature");
  if (standard !== undefined) {
    const id = required(get, "webhook-id");
    const timestamp = timestampOf(required(get, "webhook-timestamp"));
    const signatures = standard
      .split(" ")
      .filter((entry) => entry !== "")
      .map((entry) => split(entry, ","));
    const message = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
    return { scheme: "standard-webhooks", timestamp, message, signatures };
  }
  const fenix = required(get, "x-fenix-signature");
  const timestamp = timestampOf(required(get, "x-fenix-timestamp"));
  const signatures = fenix
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => split(entry, "="));
  const message = Buffer.concat([Buffer.from(`${timestamp}.`), body]);
  return { scheme: "fenix-v1", timestamp, message, signatures };
}

function required(get: (name: string) => string | undefined, name: string): string {
  const value = get(name);
  if (value === undefined || value.trim() === "") {
    throw new WebhookVerificationError("missing_header", `the ${name} header is missing`);
  }
  return value.trim();
}

function timestampOf(value: string): string {
  if (!/^\d{1,15}$/.test(value)) throw new WebhookVerificationError("malformed_header", "the timestamp is not unix seconds");
  return value;
}

function split(entry: string, separator: string): [string, string] {
  const at = entry.indexOf(separator);
  if (at <= 0) throw new WebhookVerificationError("malformed_header", `a signature entry lacks its "${separator}"`);
  return [entry.slice(0, at), entry.slice(at + 1)];
}

function matches(key: Key, signed: Signed): boolean {
  const fenix = signed.scheme === "fenix-v1";
  for (const [version, value] of signed.signatures) {
    if (key.kind === "hmac" && version === "v1") {
      const secret = fenix ? key.fenixKey : key.standardKey;
      const expected = createHmac("sha256", secret).update(signed.message).digest();
      const given = fenix ? decode(value, "hex") : decode(value, "base64");
      if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
    }
    if (key.kind === "ed25519" && version === "v1a") {
      // fenix-v1 writes `<key id>:<signature>`: the signature is after the last colon.
      const signature = decode(fenix ? value.slice(value.lastIndexOf(":") + 1) : value, "base64");
      if (signature.length === 64 && verifySignature(null, signed.message, key.publicKey, signature)) return true;
    }
  }
  return false;
}

function decode(value: string, encoding: "hex" | "base64"): Buffer {
  const valid = encoding === "hex" ? /^[0-9a-f]+$/ : /^[A-Za-z0-9+/]+={0,2}$/;
  return valid.test(value) ? Buffer.from(value, encoding) : Buffer.alloc(0);
}
