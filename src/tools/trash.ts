import { z } from "zod";
import { conflict, invalid, notFound } from "../domain/errors.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { allTrashItems, listTrashRows, PURGE_CHUNK, purgeStatements, type RecordPrefix, type TrashKind, type TrashRow } from "../db/trash.ts";
import { AGAIN, defineTool, named, type AnyTool, type ToolContext } from "../catalog/tool.ts";
import {
  purgedSummary, purgedTarget, recordRestoreState, restorable, restoredSummary, restoreAnyStatements, restoreState, selectOrphans, selectPurged, selectTrashCount,
  selectTrashItem, someInTrash, trashHolds, type Blocker,
} from "../db/trash-writes.ts";
import { cursor, id, limit } from "./schemas.ts";

const TRASH_KINDS = ["task", "project", "step", "comment"] as const;
const KIND_OF_PREFIX: Record<RecordPrefix, TrashKind> = { tsk: "task", prj: "project", stp: "step", cmt: "comment" };
const LIST_HINT = "list_trash lists what is in the trash; purged items are gone for good";

const trashId = id("trs", "trash item");

const trashItem = z.object({
  id: z.string().meta({ detail: "trash item id (trs_…)" }),
  kind: z.enum(TRASH_KINDS),
  target_id: z.string().describe("the deleted task, project, step or comment"),
  title: z.string(),
  item_count: z.number().describe("rows deleted as one unit (a task and its subtasks, a project and its tasks)"),
  deleted_by: z.string().describe("`human` or the agent's name"),
  deleted_by_token_id: z.string(),
  deleted_at: z.string(),
  purge_after: z.string().describe("when it will be purged for good"),
});

function toItem(r: TrashRow): z.infer<typeof trashItem> {
  return {
    id: r.id,
    kind: r.kind,
    target_id: r.target_id,
    title: r.title,
    item_count: r.item_count,
    deleted_by: r.deleted_by,
    deleted_by_token_id: r.deleted_by_token,
    deleted_at: r.deleted_at,
    purge_after: r.purge_after,
  };
}

const listTrash = defineTool({
  name: "list_trash",
  description: "Trash items, newest first: kind, id, title, size, who deleted it, when it will be purged.",
  input: z.strictObject({ kind: z.enum(TRASH_KINDS).optional(), limit, cursor }),
  output: z.object({ items: z.array(trashItem), next_cursor: z.string().nullable() }),
  async handler(ctx, args) {
    const rows = await listTrashRows(ctx.db, ctx.principal.accountId, { kind: args.kind, after: decodeCursor(args.cursor), limit: args.limit });
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.deleted_at, id: r.id }));
    return { items: items.map(toItem), next_cursor };
  },
});

const restoreOutput = z.object({
  restored: z.boolean().describe("false when it was already restored or was never deleted"),
  trash_id: z.string().nullable(),
  kind: z.enum(TRASH_KINDS).nullable(),
  target_id: z.string().nullable(),
  item_count: z.number(),
  detached: z.array(z.string()).describe("task ids whose project or parent task had been purged meanwhile; they come back without it"),
});

/**
 * Puts trash item `trashId` back: when nothing of it waits on another item,
 * its rows lose the mark (tasks whose project or parent was purged meanwhile
 * detached from it) and the item goes.
 */
function restoreItem(ctx: ToolContext, trashId: string) {
  const { db, principal: p } = ctx;
  const a = p.accountId;
  return ctx.write({
    subject: `trash item ${trashId}`,
    apply: (miss) =>
      ctx.commit(
        {
          statements: [
            ctx.guard(restorable({ accountId: a, itemId: trashId }), miss),
            named("item", selectTrashItem(db, a, trashId)),
            named("orphans", selectOrphans(db, a, trashId)),
            ...restoreAnyStatements(db, a, trashId, ctx.now),
          ],
          activity: { target: trashId, summarySql: restoredSummary(a, trashId) },
        },
        (rows) => {
          const item = rows.item[0] as TrashRow;
          const detached = (rows.orphans as { id: string }[]).map((r) => r.id);
          return { restored: true, trash_id: item.id, kind: item.kind, target_id: item.target_id, item_count: item.item_count, detached };
        },
      ),
    // Missed: restored already (answered as the first call was, from its record), not found, or waiting on another item (refused).
    async diagnose() {
      const { item, blockers, first } = await restoreState(db, a, trashId);
      if (!item) {
        if (first) return { restored: false, ...first };
        throw notFound("trash item", trashId, LIST_HINT);
      }
      if (blockers.length === 0) return AGAIN;
      throw blocked(item, blockers[0]);
    },
  });
}

/** The refusal of an item that waits on another one still in the trash. */
function blocked(item: TrashRow, b: Blocker): Error {
  return conflict(
    `Cannot restore ${item.kind} ${item.target_id} (${item.id}): its ${b.what} ${b.id} is itself in the trash as item ${b.trash_id}. Restore ${b.trash_id} first, then this item.`,
  );
}

const restoreFromTrash = defineTool({
  name: "restore_from_trash",
  description: "Put a trash item back exactly as it was; item_id is its trash id or the deleted record's id. Returns restored.",
  input: z.strictObject({
    item_id: z
      .string()
      .regex(/^(trs|tsk|prj|stp|cmt)_[0-9a-z]{16}$/, "expected a trash item id (trs_…) or the id of the deleted task, project, step or comment")
      .meta({ detail: "trash item id (trs_…), or the deleted task, project, step or comment id" }),
  }),
  output: restoreOutput,
  async handler(ctx, { item_id }) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    const prefix = item_id.slice(0, 3);
    if (prefix === "trs") return restoreItem(ctx, item_id);
    // A deleted record's id: the item rooted at it (refused at once when it waits on another), or where the record is,
    // all read in one round trip before the restore's own.
    const kind = KIND_OF_PREFIX[prefix as RecordPrefix];
    const { item, blockers, place, first } = await recordRestoreState(db, a, prefix as RecordPrefix, item_id);
    if (item) {
      if (blockers.length > 0) throw blocked(item, blockers[0]);
      return restoreItem(ctx, item.id);
    }
    if (!place) throw notFound(kind, item_id, LIST_HINT);
    if (place.trash_id === null) {
      return first ? { restored: false, ...first } : { restored: false, trash_id: null, kind, target_id: item_id, item_count: 0, detached: [] };
    }
    throw conflict(
      `${kind} ${item_id} was deleted as part of trash item ${place.trash_id}; restore_from_trash with item_id ${place.trash_id} brings back that whole unit (list_trash shows it).`,
    );
  },
});

const EMPTY_ALL_MAX = 10 * PURGE_CHUNK;

type Purged = { id: string; kind: TrashKind; target_id: string; title: string; item_count: number };

/**
 * Purges those of these trash items (distinct, at most PURGE_CHUNK) that are
 * in the trash, with the step and comment items of their tasks; answers what
 * went, which ids were not in the trash, and how many items remain.
 */
function purgeItems(ctx: ToolContext, ids: string[]) {
  const { db, principal: p } = ctx;
  const a = p.accountId;
  return ctx.write({
    subject: "the trash",
    apply: (miss) =>
      ctx.commit(
        {
          statements: [
            ctx.guard(someInTrash({ accountId: a, itemIds: ids }), miss),
            named("purged", selectPurged(db, a, ids)),
            ...purgeStatements(db, a, ids),
            named("remaining", selectTrashCount(db, a)),
          ],
          activity: {
            target: null,
            targetSql: purgedTarget(a, ids),
            summarySql: purgedSummary(a, ids),
          },
        },
        (rows) => {
          const rowsPurged = rows.purged as (TrashRow & { part: number })[];
          const found = new Set(rowsPurged.filter((r) => r.part === 0).map((r) => r.id));
          return {
            purged: rowsPurged.map((r): Purged => ({ id: r.id, kind: r.kind, target_id: r.target_id, title: r.title, item_count: r.item_count })),
            not_in_trash: ids.filter((i) => !found.has(i)),
            remaining: (rows.remaining[0] as { n: number }).n,
          };
        },
      ),
    // Missed: none of them is in the trash (nothing to purge).
    async diagnose() {
      const { found, remaining } = await trashHolds(db, a, ids);
      return found > 0 ? AGAIN : { purged: [] as Purged[], not_in_trash: ids, remaining };
    },
  });
}

const emptyTrash = defineTool({
  name: "empty_trash",
  description: "Purge trash items for good: item_ids, or all (500 a call). Returns purged.",
  input: z.strictObject({
    item_ids: z.array(trashId).min(1).max(PURGE_CHUNK).optional().meta({ detail: "the trash items to purge" }),
    all: z.literal(true).optional().meta({ detail: "purge everything in the trash" }),
  }),
  output: z.object({
    purged: z
      .array(trashItem.pick({ id: true, kind: true, target_id: true, title: true, item_count: true }))
      .describe("the items purged, with the step and comment items of purged tasks"),
    not_in_trash: z.array(z.string()).describe("given ids that are not (or no longer) in the trash"),
    remaining: z.number().describe("items still in the trash after this call"),
  }),
  async handler(ctx, args) {
    if (!args.all === !args.item_ids) {
      throw invalid("Pass either item_ids (trash item ids from list_trash) or all: true to purge everything; not both, not neither.");
    }
    if (args.item_ids) return purgeItems(ctx, [...new Set(args.item_ids)]);
    // All: the oldest items first, a chunk a batch; what a chunk took along is not purged again.
    let rest = await allTrashItems(ctx.db, ctx.principal.accountId, EMPTY_ALL_MAX);
    const purged: Purged[] = [];
    let remaining = 0;
    while (rest.length > 0) {
      const done = await purgeItems(ctx, rest.slice(0, PURGE_CHUNK).map((r) => r.id));
      purged.push(...done.purged);
      remaining = done.remaining;
      const gone = new Set(done.purged.map((r) => r.id));
      rest = rest.slice(PURGE_CHUNK).filter((r) => !gone.has(r.id));
    }
    return { purged, not_in_trash: [] as string[], remaining };
  },
});

export const trashTools: AnyTool[] = [listTrash, restoreFromTrash, emptyTrash];
