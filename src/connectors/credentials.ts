/**
 * The shape of each app's credentials, checked before anything is stored
 * (the admin CLI) and again after decryption (the Worker). Messages name what
 * is missing or wrong and never repeat a value.
 */
import { PROVIDER_NAMES, type Provider } from "../domain/providers.ts";
import type { Credentials, DriveCredentials, TokenCredentials } from "./types.ts";

export class CredentialsError extends Error {}

const FIELDS: Record<Provider, readonly string[]> = {
  drive: ["client_id", "client_secret", "refresh_token"],
  slack: ["token"],
  notion: ["token"],
};

export const CREDENTIALS_EXAMPLE: Record<Provider, string> = {
  drive: '{"client_id": "…", "client_secret": "…", "refresh_token": "…"}',
  slack: '{"token": "xoxp-…"}',
  notion: '{"token": "ntn_…"}',
};

export function parseCredentials(provider: Provider, value: unknown): Credentials {
  const expected = FIELDS[provider];
  const shape = `${PROVIDER_NAMES[provider]} credentials must be a JSON object ${CREDENTIALS_EXAMPLE[provider]}`;
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new CredentialsError(`${shape}.`);
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  const missing = expected.filter((k) => record[k] === undefined || record[k] === null || record[k] === "");
  if (missing.length) problems.push(`missing ${missing.join(", ")}`);
  const unexpected = Object.keys(record).filter((k) => !expected.includes(k));
  if (unexpected.length) problems.push(`unexpected ${unexpected.join(", ")}`);
  for (const k of expected) {
    const v = record[k];
    if (v === undefined || v === null || v === "") continue;
    if (typeof v !== "string") problems.push(`${k} must be a string`);
    else if (/\s/.test(v.trim()) || v.trim().length > 4096) problems.push(`${k} must be one word of at most 4096 characters`);
  }
  if (!problems.length && provider === "slack") {
    const token = (record.token as string).trim();
    if (token.startsWith("xoxb-")) problems.push("token is a bot token (xoxb-); search needs a user token (xoxp-…) with search:read");
    else if (!/^xox[a-z]?[-.]/.test(token)) problems.push("token is not a Slack token (expected xoxp-…)");
  }
  if (problems.length) throw new CredentialsError(`${shape}: ${problems.join("; ")}.`);
  const out: Record<string, string> = {};
  for (const k of expected) out[k] = (record[k] as string).trim();
  return out as unknown as Credentials;
}

/** The JSON text of a credentials file, checked. */
export function readCredentialsJson(provider: Provider, text: string): Credentials {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CredentialsError(`the credentials file is not JSON; ${PROVIDER_NAMES[provider]} expects ${CREDENTIALS_EXAMPLE[provider]}.`);
  }
  return parseCredentials(provider, value);
}

export function isDrive(c: Credentials): c is DriveCredentials {
  return "refresh_token" in c;
}

export function tokenOf(c: Credentials): string {
  return (c as TokenCredentials).token;
}

/** Every secret value, so that no message can carry one by accident. */
export function secretsOf(c: Credentials): string[] {
  return Object.values(c).filter((v): v is string => typeof v === "string" && v.length >= 6);
}
