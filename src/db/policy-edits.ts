/**
 * The console's policy pages: what they read (an agent's or a connection's
 * stored rules, the account's projects a rule may name) and the one batch
 * that writes a person's change (setAgentPolicy / setTokenPolicy from
 * policy.ts) with its activity row and the form's one-time key, only if the
 * rules are still those the page showed: two tabs never overwrite each other
 * unseen, and a refused batch writes nothing.
 */
import type { Condition } from "../catalog/tool.ts";
import { readBatch } from "./batch.ts";
import { frameOf, frameStatements, type Frame } from "./console.ts";
import { guardStatement } from "./guards.ts";
import { setAgentPolicy, setTokenPolicy } from "./policy.ts";

/** Projects a rule may name: the account's, live or archived, by name. */
const PROJECTS_SHOWN = 300;

export interface PolicyProject {
  id: string;
  name: string;
  archived: number;
}

export interface PolicyConnection {
  id: string;
  label: string;
  client_name: string | null;
  scope: "read" | "write";
  policy: string | null;
}

export interface AgentPolicyPage extends Frame {
  agent: { id: string; name: string; policy: string | null; paused_at: string | null } | null;
  projects: PolicyProject[];
  /** The agent's working connections, each with its own rules. */
  connections: PolicyConnection[];
}

const CONNECTIONS_SHOWN = 100;

function projectsStatement(db: D1Database, accountId: string): D1PreparedStatement {
  return db
    .prepare("SELECT id, name, archived_at IS NOT NULL AS archived FROM projects WHERE account_id = ? AND trash_id IS NULL ORDER BY name, id LIMIT ?")
    .bind(accountId, PROJECTS_SHOWN);
}

/** An agent by name with its rules, its working connections and the account's projects: one round trip. */
export async function readAgentPolicyPage(db: D1Database, accountId: string, name: string, now: string): Promise<AgentPolicyPage> {
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    agent: db.prepare("SELECT id, name, policy, paused_at FROM agents WHERE account_id = ? AND name = ?").bind(accountId, name),
    projects: projectsStatement(db, accountId),
    connections: db
      .prepare(
        `SELECT t.id, t.label, t.client_name, t.scope, t.policy FROM tokens t JOIN agents a ON a.id = t.agent_id
          WHERE a.account_id = ? AND a.name = ? AND t.account_id = a.account_id AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?)
          ORDER BY t.created_at DESC LIMIT ?`,
      )
      .bind(accountId, name, now, CONNECTIONS_SHOWN),
  });
  return {
    ...frameOf(r, accountId),
    agent: (r.agent[0] as AgentPolicyPage["agent"]) ?? null,
    projects: r.projects as PolicyProject[],
    connections: r.connections as PolicyConnection[],
  };
}

export interface TokenPolicyRow {
  id: string;
  kind: "human" | "agent";
  scope: "read" | "write";
  label: string;
  client_name: string | null;
  revoked_at: string | null;
  expires_at: string | null;
  policy: string | null;
  agent_id: string | null;
  agent_name: string | null;
  agent_policy: string | null;
}

export interface TokenPolicyPage extends Frame {
  token: TokenPolicyRow | null;
  projects: PolicyProject[];
}

/** A token (or an app's connection) with its own rules and its agent's: one round trip. */
export async function readTokenPolicyPage(db: D1Database, accountId: string, tokenId: string): Promise<TokenPolicyPage> {
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    token: db
      .prepare(
        `SELECT t.id, t.kind, t.scope, t.label, t.client_name, t.revoked_at, t.expires_at, t.policy, t.agent_id, a.name AS agent_name, a.policy AS agent_policy
           FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.id = ? AND t.account_id = ?`,
      )
      .bind(tokenId, accountId),
    projects: projectsStatement(db, accountId),
  });
  return { ...frameOf(r, accountId), token: (r.token[0] as TokenPolicyRow) ?? null, projects: r.projects as PolicyProject[] };
}

/** The agent still has the rules the page showed (`was`; null: none). */
function agentPolicyIs(accountId: string, agentId: string, was: string | null): Condition {
  return { sql: "EXISTS (SELECT 1 FROM agents WHERE id = ? AND account_id = ? AND policy IS ?)", binds: [agentId, accountId, was] };
}

/** The connection is a live agent token that still has the rules the page showed. */
function tokenPolicyIs(accountId: string, tokenId: string, was: string | null): Condition {
  return {
    sql: "EXISTS (SELECT 1 FROM tokens WHERE id = ? AND account_id = ? AND kind = 'agent' AND revoked_at IS NULL AND policy IS ?)",
    binds: [tokenId, accountId, was],
  };
}

export interface PolicyWrite {
  accountId: string;
  /** The agent's id, or the token's. */
  id: string;
  rules: string | null;
  was: string | null;
  /** The activity row and the form's one-time key, written in the same batch. */
  activity: D1PreparedStatement;
  once: D1PreparedStatement;
}

/** Why a policy write was refused: the form was sent before, or the rules changed since the page showed them. */
export type PolicyWriteRefusal = "form_used" | "changed";

async function writeGuarded(db: D1Database, guard: Condition, set: D1PreparedStatement, w: PolicyWrite): Promise<PolicyWriteRefusal | null> {
  try {
    await db.batch([w.once, guardStatement(db, guard), set, w.activity]);
    return null;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (message.includes("idempotency_keys")) return "form_used";
    if (message.includes("CHECK constraint failed: guard")) return "changed";
    throw e;
  }
}

/** Sets an agent's rules, if they are still `was`; nothing is written otherwise. */
export function writeAgentPolicy(db: D1Database, w: PolicyWrite): Promise<PolicyWriteRefusal | null> {
  return writeGuarded(db, agentPolicyIs(w.accountId, w.id, w.was), setAgentPolicy(db, w.accountId, w.id, w.rules), w);
}

/** Sets a live agent token's own rules, if they are still `was`; nothing is written otherwise. */
export function writeTokenPolicy(db: D1Database, w: PolicyWrite): Promise<PolicyWriteRefusal | null> {
  return writeGuarded(db, tokenPolicyIs(w.accountId, w.id, w.was), setTokenPolicy(db, w.accountId, w.id, w.rules), w);
}
