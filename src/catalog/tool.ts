import type { z } from "zod";
import type { Env } from "../env.ts";
import type { Principal } from "../domain/principal.ts";
import type { TaskgateEvent } from "../domain/events.ts";
import type { ToolName } from "./effects.ts";

/** The record every write appends to the activity log, in the same batch as the change. */
export interface ActivityEntry {
  target: string | null;
  /** The summary; with summarySql, the fallback should that read nothing. */
  summary?: string;
  /**
   * A summary computed in the batch from the rows as they are before the change
   * (an SQL expression and its binds): the activity row then goes first in the batch.
   */
  summarySql?: { sql: string; binds: unknown[] };
  /** The target read the same way (`target` stands in should it read nothing); the activity row then goes first too. */
  targetSql?: { sql: string; binds: unknown[] };
}

/** A guard's error, or how to find it (after the batch rolled back) when it must say what the rows hold. */
export type GuardError = Error | (() => Promise<Error>);

export interface Write {
  statements: D1PreparedStatement[];
  activity: ActivityEntry;
  /** Webhook events this write causes (or how to make them from the statements' results): the registry enqueues them once the batch has committed. */
  events?: TaskgateEvent[] | ((results: D1Result[]) => TaskgateEvent[]);
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
  /** ISO 8601 UTC time of this call, the same for every row it writes. */
  now: string;
  nowMs: number;
  /**
   * Runs the statements plus the activity row (and the idempotency record) as
   * one D1 batch, and returns `result` — or, given a function, what it makes
   * of the statements' results (rows the batch read at its end, RETURNING).
   */
  commit<R>(write: Write, result: R | ((results: D1Result[]) => R)): Promise<R>;
  /**
   * A batch statement that aborts the whole batch unless `condition` (an SQL
   * expression) holds at that point of the batch; the caller then gets `error`
   * (a function is called only then, to diagnose the rows after the rollback).
   */
  guard(condition: string, binds: unknown[], error: GuardError): D1PreparedStatement;
  /** Runs the batch's results back: statements only, for tools that need counts. */
  commitWithResults(write: Write): Promise<D1Result[]>;
  /** Handler-owned work to finish after the response (bookkeeping, never data). */
  waitUntil(promise: Promise<unknown>): void;
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
