import type { Env } from "../env.ts";
import type { Principal } from "../domain/principal.ts";
import { actorName } from "../domain/principal.ts";
import { conflict, forbidden, ToolError } from "../domain/errors.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import type { TaskgateEvent } from "../domain/events.ts";
import { claimRefusal, PERSON_ASSIGNEE } from "../domain/claims.ts";
import { claimRefusalFor, consentRefusal, decisionRefusal, gateRefusal, namedIds, namedTarget, nocallerRefusal, pausedRefusal, undoRefusal, waitsRefusal } from "../domain/consent.ts";
import { insertIdempotent, PENDING_RESULT, recordIdempotent, type IdempotencyScope } from "../db/idempotency.ts";
import { insertActivity, insertActivityFrom } from "../db/activity.ts";
import { conditionsHold, guardStatement } from "../db/guards.ts";
import { batchByName, statementOf, type NamedResults } from "../db/batch.ts";
import { actorIn, actorOut, consentCodeOf, heldTasksNamed, namedTaskCheck, pausedAgentsNamed, pendingRequestsNamed, unfinishedDependenciesNamed, type ConsentCode } from "../db/consent.ts";
import { CLAIM_GUARDED_TOOLS, type ToolName } from "../catalog/effects.ts";
import { ALL_TOOLS_SELECTED, type ToolSelection } from "../catalog/toolsets.ts";
import { AGAIN, type ActivityEntry, type BatchStep, type Changes, type Condition, type GuardError, type Rows, type ToolContext, type Write } from "../catalog/tool.ts";

/**
 * The write engine: every batch a tool call commits runs here. It opens the
 * batch with the caller (for the consent rules, which schema.sql's triggers
 * hold every row to), adds the idempotency record, appends the activity row,
 * closes the batch, and turns a refusal into the caller's answer: a guard's
 * own error, or for a consent rule one read of what stood in the way.
 */

export interface CallScope {
  env: Env;
  principal: Principal;
  requestId: string;
  waitUntil(promise: Promise<unknown>): void;
  /** The tools this connection narrowed itself to (none given: all). */
  toolsets?: ToolSelection;
  /** A pending action a person approved, run now as the agent asked it: its policy asked already. */
  approved?: { approvalId: string };
}

/** An idempotency key with the fingerprint of the call that carries it. */
export interface Idempotency {
  scope: IdempotencyScope;
  requestHash: string;
}

/** A keyed call lost the race for its key to an earlier call with it. */
export class IdempotentReplay extends Error {}

interface Guard {
  condition: Condition;
  error: GuardError;
}

/**
 * The context a handler gets for one call. `committed` collects the events
 * of every batch that committed, for the registry to enqueue; `args` are the
 * call's arguments, which a consent refusal reads to name what it reached.
 */
/** What the registry lends a call's context: the answers that need the whole catalog. */
export type ContextHooks = Pick<ToolContext, "dryRun" | "runApproved">;

const NO_HOOKS: ContextHooks = {
  dryRun: () => Promise.reject(new Error("No registry hooks were given to this context.")),
  runApproved: () => Promise.reject(new Error("No registry hooks were given to this context.")),
};

export function makeContext(
  scope: CallScope,
  tool: ToolName,
  args: Record<string, unknown>,
  idempotency: Idempotency | null,
  committed: TaskgateEvent[],
  hooks: ContextHooks = NO_HOOKS,
): ToolContext & { committedOnce: boolean } {
  const db = scope.env.DB;
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  const p = scope.principal;
  const me = actorName(p);

  // Each guard statement knows its condition and error, so a failed batch diagnoses only its own guards.
  const guards = new WeakMap<D1PreparedStatement, Guard>();

  const activityStatement = (write: Write<string> & { activity: ActivityEntry }) => {
    const a = {
      id: write.activity.id ?? newId(ID_PREFIX.activity),
      accountId: p.accountId,
      tokenId: p.tokenId,
      actor: me,
      tool,
      targetId: write.activity.target,
      summary: write.activity.summary ?? "",
      now,
      personId: p.person?.id ?? null,
    };
    const fromSql = write.activity.summarySql || write.activity.targetSql;
    return fromSql ? insertActivityFrom(db, a, write.activity.summarySql, write.activity.targetSql) : insertActivity(db, a);
  };

  /** The steps of a write's batch: the activity row first when it reads the rows before the change, else last (none for bookkeeping). */
  const withActivity = <K extends string>(write: Write<K>): BatchStep<K>[] => {
    const { activity } = write;
    if (!activity) return write.statements;
    const entry = activityStatement({ ...write, activity });
    return activity.summarySql || activity.targetSql ? [entry, ...write.statements] : [...write.statements, entry];
  };

  /**
   * Why the consent rules refused the batch, read once after it rolled back.
   * A refusal for want of a caller is no ToolError: nothing the caller can fix,
   * it goes to the log and the caller hears of an internal error.
   */
  async function consentError(code: ConsentCode): Promise<ToolError | Error> {
    const named = namedIds(args);
    switch (code) {
      case "claim": {
        const held = await heldTasksNamed(db, p.accountId, me, now, named);
        // The task the call names, claimed by an agent: the claim rule's own words (src/domain/claims.ts).
        const direct = held.find((t) => t.named === 1 && t.status === "in_progress" && t.holder !== PERSON_ASSIGNEE);
        const words = direct && claimRefusal(p, { ...direct, assignee: direct.holder }, tool, now);
        return conflict(words || claimRefusalFor(me, tool, held));
      }
      case "decision":
        return forbidden(decisionRefusal(me, tool, await pendingRequestsNamed(db, p.accountId, named)));
      case "consent":
        return forbidden(consentRefusal(tool));
      case "undo":
        return forbidden(undoRefusal(tool));
      case "waits":
        return conflict(waitsRefusal(tool, await unfinishedDependenciesNamed(db, p.accountId, named)));
      case "gate":
        return forbidden(gateRefusal(me, tool));
      case "paused":
        return conflict(pausedRefusal(tool, await pausedAgentsNamed(db, p.accountId, named)));
      case "nocaller":
        return new Error(nocallerRefusal(tool));
    }
  }

  // An agent's claim-guarded call names its task first in each batch (after its idempotency key, so a retry still
  // replays): held by another, the call is refused even where it would change nothing.
  const named = p.kind === "agent" && CLAIM_GUARDED_TOOLS.has(tool) ? namedTarget(args) : null;
  const namedCheck = named ? [namedTaskCheck(db, p.accountId, named)] : [];

  /**
   * One batch: the caller first (the consent triggers read it), then the
   * steps, then the caller removed. Results are the named steps' own.
   */
  async function runBatch<K extends string>(steps: BatchStep<K>[]): Promise<NamedResults<K>> {
    const batch = newId("cal");
    try {
      return await batchByName(db, [actorIn(db, batch, { kind: p.kind, name: me, now }), ...steps, actorOut(db, batch)]);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const code = consentCodeOf(message);
      if (code) throw await consentError(code);
      if (message.includes("CHECK constraint failed: guard")) {
        // The batch rolled back: its guards, evaluated again in one round trip, name the one that failed.
        const own = steps.map((s) => guards.get(statementOf(s))).filter((g): g is Guard => g !== undefined);
        if (own.length === 0) throw e;
        if (own.every((g) => g.error === own[0].error)) throw await errorOf(own[0]);
        const holds = await conditionsHold(db, own.map((g) => g.condition));
        const failed = own.find((_, i) => !holds[i]) ?? own[0];
        throw await errorOf(failed);
      }
      if (idempotency && message.includes("idempotency_keys")) throw new IdempotentReplay();
      throw e;
    }
  }

  const errorOf = async (g: Guard) => (typeof g.error === "function" ? g.error() : g.error);

  const eventsOf = <K extends string>(write: Write<K>, r: NamedResults<K>) =>
    typeof write.events === "function" ? write.events(r.rows, r.changes) : write.events ?? [];

  const ctx: ToolContext & { committedOnce: boolean } = {
    committedOnce: false,
    db,
    env: scope.env,
    principal: p,
    selection: scope.toolsets ?? ALL_TOOLS_SELECTED,
    now,
    nowMs,
    async commit(write, result) {
      const computed = typeof result === "function";
      // First in the batch, so a retry stops at the key (and replays) before any guard; a result read by the
      // batch itself is recorded right after it, until then the record holds the key (a racing retry waits for it).
      const prefix = idempotency
        ? [insertIdempotent(db, idempotency.scope, idempotency.requestHash, computed ? PENDING_RESULT : JSON.stringify(result), now)]
        : [];
      const own = await runBatch([...prefix, ...namedCheck, ...withActivity(write)]);
      ctx.committedOnce = true;
      committed.push(...eventsOf(write, own));
      if (!computed) return result;
      const value = (result as (rows: Rows<string>, changes: Changes<string>) => unknown)(own.rows, own.changes);
      if (idempotency) await recordIdempotent(db, idempotency.scope, JSON.stringify(value));
      return value as never;
    },
    async commitWithResults(write) {
      const own = await runBatch([...namedCheck, ...withActivity(write)]);
      ctx.committedOnce = true;
      committed.push(...eventsOf(write, own));
      return own;
    },
    async write(outcome) {
      for (let tries = 1; ; tries++) {
        const miss = new Error("the state the outcome assumes does not hold");
        const lost = conflict(`${outcome.subject} changed while this call ran; read it again and retry.`);
        try {
          const answer = await outcome.apply(miss).catch(async (e) => {
            if (e !== miss) throw e;
            return outcome.diagnose(lost);
          });
          if (answer !== AGAIN) return answer;
        } catch (e) {
          if (e !== lost) throw e;
        }
        if (tries >= 3) throw lost;
      }
    },
    guard(condition, error) {
      const statement = guardStatement(db, condition);
      guards.set(statement, { condition, error });
      return statement;
    },
    waitUntil: scope.waitUntil,
    ...hooks,
  };
  return ctx;
}
