import { query, type Target } from "./d1.ts";

/** A mistake in the command line: exit 2 with the usage. */
export class UsageError extends Error {}

export type Values = Record<string, string | boolean | undefined>;

export function required(values: Values, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v.trim() === "") throw new UsageError(`--${name} is required`);
  return v.trim();
}

export function oneOf<T extends string>(values: Values, name: string, allowed: readonly T[]): T {
  const v = required(values, name);
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`--${name} must be one of ${allowed.join(", ")} (got ${v})`);
  return v as T;
}

export function accountMustExist(target: Target, accountId: string): void {
  const rows = query(target, { sql: "SELECT id FROM accounts WHERE id = ?", params: [accountId] });
  if (rows.length === 0) throw new UsageError(`no account ${accountId}; create-account makes one`);
}
