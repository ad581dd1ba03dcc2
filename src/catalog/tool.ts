import type { z } from "zod";
import type { Env } from "../env.ts";
import type { Principal } from "../domain/principal.ts";
import type { TaskgateEvent } from "../domain/events.ts";
import type { ToolName } from "./effects.ts";
import type { ToolSelection } from "./toolsets.ts";
import type { DryRun } from "./policy.ts";

/** SQL text (a condition, or a statement's) with its binds, in the order the text takes them. */
export interface Condition {
  sql: string;
  binds: unknown[];
}

/** The record every write appends to the activity log, in the same batch as the change. */
export interface ActivityEntry {
  /** The row's id, when the batch's own statements read the row (its target) after it; else a new one. */
  id?: string;
  target: string | null;
  /** The summary; with summarySql, the fallback should that read nothing. */
  summary?: string;
  /**
   * A summary computed in the batch from the rows as they are before the change
   * (an SQL expression and its binds): the activity row then goes first in the batch.
   */
  summarySql?: Condition;
  /** The target read the same way (`target` stands in should it read nothing); the activity row then goes first too. */
  targetSql?: Condition;
}

/** A guard's error, or how to find it (after the batch rolled back) when it must say what the rows hold. */
export type GuardError = Error | (() => Promise<Error>);

/** A batch statement whose results are read, by its name. */
export class Named<K extends string> {
  readonly name: K;
  readonly statement: D1PreparedStatement;
  constructor(name: K, statement: D1PreparedStatement) {
    this.name = name;
    this.statement = statement;
  }
}

/** Names a statement of a batch so the write reads its results as `rows[name]`. */
export function named<K extends string>(name: K, statement: D1PreparedStatement): Named<K> {
  return new Named(name, statement);
}

/** A statement of a batch, named when its results are read. */
export type BatchStep<K extends string = string> = D1PreparedStatement | Named<K>;

/** The rows each named statement returned (RETURNING, or a read at that point of the batch). */
export type Rows<K extends string> = { readonly [P in K]: unknown[] };
/** How many rows each named statement changed. */
export type Changes<K extends string> = { readonly [P in K]: number };

export interface Write<K extends string = never> {
  /** In batch order; the statements whose results the write reads are `named`, and read only by name. */
  statements: BatchStep<K>[];
  /** Its activity row; null only for bookkeeping that is no change to the record (a claim's lease started over), which adds no history entry. */
  activity: ActivityEntry | null;
  /** Webhook events this write causes (or how to make them from the named statements' results): the registry enqueues them once the batch has committed. */
  events?: TaskgateEvent[] | ((rows: Rows<K>, changes: Changes<K>) => TaskgateEvent[]);
}

/** A diagnosis's answer when the rows now hold what the outcome assumes: the engine applies it again. */
export const AGAIN: unique symbol = Symbol("again");
export type Again = typeof AGAIN;

/**
 * One write outcome, defined once. `apply` commits its one batch, guarded by
 * the state it assumes (a guard failing with `miss`). When that state does not
 * hold, the batch has rolled back and `diagnose` reads the rows once to answer
 * what the first call would have: a no-op, a refusal (thrown), another outcome
 * it commits under a guard on what it read (failing with `lost`), or AGAIN when
 * the rows now hold what `apply` assumes.
 */
export interface Outcome<R> {
  /** What the call writes, for the refusal when it keeps changing under it ("task tsk_…"). */
  subject: string;
  apply(miss: Error): Promise<R>;
  diagnose(lost: Error): Promise<R | Again>;
}

/**
 * What a handler gets: the database, the caller, the time, and the one way to
 * write. Handlers never see the SDK server; permission, validation, error
 * mapping, activity and idempotency are the registry's job.
 */
export interface ToolContext {
  db: D1Database;
  env: Env;
  principal: Principal;
  /** The tools this call's connection selected (its toolsets and read-only view; all for a plain /mcp). */
  selection: ToolSelection;
  /** ISO 8601 UTC time of this call, the same for every row it writes. */
  now: string;
  nowMs: number;
  /**
   * Runs the statements plus the activity row (and the idempotency record) as
   * one D1 batch, and returns `result` — or, given a function, what it makes
   * of the named statements' results (rows read in the batch, RETURNING).
   */
  commit<R, K extends string = never>(write: Write<K>, result: R | ((rows: Rows<K>, changes: Changes<K>) => R)): Promise<R>;
  /**
   * A batch statement that aborts the whole batch unless `condition` (an SQL
   * expression with its binds, from a builder in src/db) holds at that point
   * of the batch; the caller then gets `error` (a function is called only
   * then, to diagnose the rows after the rollback).
   */
  guard(condition: Condition, error: GuardError): D1PreparedStatement;
  /**
   * Applies a write outcome: its batch, or on a miss its diagnosis (which
   * answers, refuses, commits another outcome or sends it back to `apply`).
   * A call whose rows keep changing under it is refused after three tries.
   */
  write<R>(outcome: Outcome<R>): Promise<R>;
  /** Runs the batch (without an idempotency record) and returns the named statements' rows and counts. */
  commitWithResults<K extends string>(write: Write<K>): Promise<{ rows: Rows<K>; changes: Changes<K> }>;
  /** Handler-owned work to finish after the response (bookkeeping, never data). */
  waitUntil(promise: Promise<unknown>): void;
  /** Would this call be allowed for this caller, and what would it reach? The registry answers without running it (whoami's dry run). */
  dryRun(tool: string, args: unknown): Promise<DryRun>;
  /**
   * Runs a pending action a person approved: exactly as the agent asked it,
   * as the agent (its connection resolved again now), once. The registry
   * answers with the call's own result (a refusal when the connection is
   * revoked or its agent paused).
   */
  runApproved(action: ApprovedAction): Promise<ApprovedResult>;
}

/** A pending action a person approved, to be run. */
export interface ApprovedAction {
  id: string;
  accountId: string;
  tokenId: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/** What the approved call answered (an MCP CallToolResult). */
export interface ApprovedResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: ToolName;
  description: string;
  input: I;
  output: O;
  handler: (ctx: ToolContext, args: z.output<I>) => Promise<z.input<O>>;
}

/** Identity with inference: a tool is a value bundling its schemas and handler. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDef<any, any>;
