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
    if (all.length === 0) throw new TypeError("Webhook needs at least one secret or public key");
    this.keys = all.map(parseKey);
  }

  /**
   * Checks the request and answers its parsed event; throws
   * {@link WebhookVerificationError} when it must not be trusted. `rawBody`
   * is the body exactly as received: verify before parsing it.
   */
  verify<T = unknown>(rawBody: string | Uint8Array, headers: WebhookHeaders, options: VerifyOptions = {}): WebhookEvent<T> {
    const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody);
    const signed = readSigned(body, lowerCased(headers));
    const now = options.now ?? Math.floor(Date.now() / 1000);
    const age = now - Number(signed.timestamp);
    if (age > TOLERANCE_SECONDS) throw new WebhookVerificationError("expired", "the signed timestamp is too old");
    if (age < -TOLERANCE_SECONDS) throw new WebhookVerificationError("future", "the signed timestamp is in the future");
    if (!this.keys.some((key) => matches(key, signed))) {
      throw new WebhookVerificationError("no_match", "no signature matches the key(s) held");
    }
    let event: unknown;
    try {
      event = JSON.parse(body.toString("utf8"));
    } catch {
      throw new WebhookVerificationError("malformed_body", "the body is not JSON");
    }
    if (typeof event !== "object" || event === null || Array.isArray(event)) {
      throw new WebhookVerificationError("malformed_body", "the body is not a JSON object");
    }
    return event as WebhookEvent<T>;
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
  throw new TypeError("a key is an endpoint secret (`whsec_` + base64) or public key (`whpk_` + base64 of 32 bytes)");
}

/** The headers by lower-case name, whatever shape they were given in. */
function lowerCased(headers: WebhookHeaders): Map<string, string> {
  const lower = new Map<string, string>();
  const pairs: Iterable<[string, string | string[] | undefined]> =
    typeof (headers as Headers).forEach === "function" && typeof (headers as Headers).get === "function"
      ? [...(headers as Headers).entries()]
      : Object.entries(headers as Record<string, string | string[] | undefined>);
  for (const [name, value] of pairs) {
    if (value !== undefined) lower.set(name.toLowerCase(), Array.isArray(value) ? value.join(", ") : value);
  }
  return lower;
}

/** The scheme is told by its headers: `webhook-*` (Standard Webhooks) or `X-Fenix-*`. */
function readSigned(body: Buffer, headers: Map<string, string>): Signed {
  const standard = [...headers.keys()].some((name) => name.startsWith("webhook-"));
  const [id, timestampName, signatureName] = standard
    ? [required(headers, "webhook-id"), "webhook-timestamp", "webhook-signature"]
    : ["", "x-fenix-timestamp", "x-fenix-signature"];
  const timestamp = required(headers, timestampName);
  const header = required(headers, signatureName);
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError("malformed_header", `${timestampName} is not unix seconds`);
  }
  const signatures = entries(header, standard ? " " : ",", standard ? "," : "=");
  if (signatures.length === 0) {
    throw new WebhookVerificationError("malformed_header", `${signatureName} holds no signature`);
  }
  const signedPart = standard ? `${id}.${timestamp}.` : `${timestamp}.`;
  const message = Buffer.concat([Buffer.from(signedPart, "utf8"), body]);
  return { scheme: standard ? "standard-webhooks" : "fenix-v1", timestamp, message, signatures };
}

/** `v1=a,v1a=b` (fenix-v1) or `v1,a v1a,b` (Standard Webhooks) as `[version, value]` pairs; others are skipped. */
function entries(header: string, separator: string, joiner: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const entry of header.split(separator)) {
    const trimmed = entry.trim();
    const at = trimmed.indexOf(joiner);
    if (at > 0 && at < trimmed.length - 1) pairs.push([trimmed.slice(0, at), trimmed.slice(at + 1)]);
  }
  return pairs;
}

function required(headers: Map<string, string>, name: string): string {
  const value = headers.get(name)?.trim();
  if (value === undefined || value === "") {
    throw new WebhookVerificationError("missing_header", `the ${name} header is missing`);
  }
  return value;
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
