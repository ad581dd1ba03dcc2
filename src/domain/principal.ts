export type TokenKind = "human" | "agent";
export type TokenScope = "read" | "write";

/** The caller, as resolved from the bearer token at the edge. */
export interface Principal {
  tokenId: string;
  accountId: string;
  kind: TokenKind;
  scope: TokenScope;
  agentId: string | null;
  agentName: string | null;
  paused: boolean;
  label: string;
  expiresAt: string | null;
  /** The account is moving to another database: its writes are refused until it has moved. */
  moving?: boolean;
  /** An agent's policy rules as stored (src/catalog/policy.ts reads them): its agent's and its connection's own; absent: none. */
  policy?: { agent: string | null; connection: string | null };
  /**
   * Which person a `human` caller is (id and shown name): the one signed in to the
   * console, or who connected the app through OAuth. Null for an agent, and for a
   * person's tg_ token that belongs to no person.
   */
  person: PersonRef | null;
}

/** A person as outputs name one: id and shown name. */
export interface PersonRef {
  id: string;
  name: string;
}

/** The name shown for a person: the display name they set, else the part of their email before the @. */
export function shownName(displayName: string | null | undefined, email: string): string {
  const set = (displayName ?? "").trim();
  if (set) return set;
  const at = email.indexOf("@");
  return at > 0 ? email.slice(0, at) : email;
}

/** A person's id and name as one value, or null without an id. */
export function personRef(id: string | null | undefined, name: string | null | undefined): PersonRef | null {
  return id ? { id, name: name || "a person" } : null;
}

/** The name a principal acts under: the agent's name, or `human` for the person. */
export function actorName(p: Principal): string {
  return p.kind === "agent" ? (p.agentName as string) : "human";
}
