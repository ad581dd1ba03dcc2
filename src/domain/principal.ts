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
}

/** The name a principal acts under: the agent's name, or `human` for the person. */
export function actorName(p: Principal): string {
  return p.kind === "agent" ? (p.agentName as string) : "human";
}
