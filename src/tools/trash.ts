import { z } from "zod";
import { conflict, invalid, notFound } from "../domain/errors.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import {
  allStillInTrash, allTrashItems, countTrash, dependentItems, findTrashItem, findTrashItemByTarget, findTrashItems, listTrashRows, locateRecord, PURGE_CHUNK, purgeStatements,
  restorableCondition, restoreCheck, restoreStatements, restoration, type RecordPrefix, type TrashKind, type TrashRow,
} from "../db/trash.ts";
import { defineTool, named, type AnyTool } from "../catalog/tool.ts";
import { fastOr } from "./fast.ts";
import { LIST_SEPARATOR, PURGED, PURGED_ITEM, RESTORED, RESTORED_DETACHED } from "../db/summaries.ts";
import {
  allInTrash, purgedSummary, restorableAsIs, restoredSummary, restoreAnyStatements, selectPurged, selectTrashCount, selectTrashItem,
} from "../db/trash-writes.ts";
import { cursor, id, limit } from "./schemas.ts";

const TRASH_KINDS = ["task", "project", "step", "comment"] as const;
const KIND_OF_PREFIX: Record<RecordPrefix, TrashKind> = { tsk: "task", prj: "project", stp: "step", cmt: "comment" };
const LIST_HINT = "list_trash lists what is in the trash; purged items are gone for good";

const trashId = id("trs", "trash item");

const trashItem = z.object({
  id: z.string().describe("trash item id (trs_…)"),
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
    const slowly = async () => {
      const prefix = item_id.slice(0, 3);
      let item: TrashRow | null;
      if (prefix === "trs") {
        item = await findTrashItem(db, a, item_id);
        if (!item) {
          // A repeat answers as the first call did (C7), from that call's record.
          const first = await restoration(db, a, { trashId: item_id });
          if (first) return { restored: false, ...first };
          throw notFound("trash item", item_id, LIST_HINT);
        }
      } else {
        const kind = KIND_OF_PREFIX[prefix as RecordPrefix];
        item = await findTrashItemByTarget(db, a, item_id);
        if (!item) {
          const where = await locateRecord(db, a, prefix as RecordPrefix, item_id);
          if (!where) throw notFound(kind, item_id, LIST_HINT);
          if (where.trash_id === null) {
            const first = await restoration(db, a, { targetId: item_id });
            return first ? { restored: false, ...first } : { restored: false, trash_id: null, kind, target_id: item_id, item_count: 0, detached: [] };
          }
          throw conflict(
            `${kind} ${item_id} was deleted as part of trash item ${where.trash_id}; restore_from_trash with item_id ${where.trash_id} brings back that whole unit (list_trash shows it).`,
          );
        }
      }
      const check = await restoreCheck(db, a, item);
      if (check.blockers.length > 0) {
        const b = check.blockers[0];
        throw conflict(
          `Cannot restore ${item.kind} ${item.target_id} (${item.id}): its ${b.what} ${b.id} is itself in the trash as item ${b.trash_id}. Restore ${b.trash_id} first, then this item.`,
        );
      }
      const raced = conflict(`trash item ${item.id} changed meanwhile (restored, purged, or its project, parent or task went to the trash); list_trash shows the current state.`);
      return ctx.commit(
        {
          statements: [
            ctx.guard(restorableCondition({ accountId: a, itemId: item.id, kind: item.kind }), raced),
            ...restoreStatements(db, a, item, check.orphans.length > 0, ctx.now),
          ],
          activity: {
            target: item.id,
            summary: RESTORED.text({
              kind: item.kind, id: item.target_id, title: item.title, count: item.item_count,
              detached: check.orphans.length ? RESTORED_DETACHED.text({ ids: check.orphans.join(LIST_SEPARATOR) }) : "",
            }),
          },
        },
        { restored: true, trash_id: item.id, kind: item.kind, target_id: item.target_id, item_count: item.item_count, detached: check.orphans },
      );
    };
    if (!item_id.startsWith("trs_")) return slowly();
    // The usual case in one batch: an item in the trash that nothing blocks and nothing has to be detached from.
    return fastOr(async (miss) => {
      const a = p.accountId;
      return ctx.commit(
        {
          statements: [ctx.guard(restorableAsIs({ accountId: a, itemId: item_id }), miss), named("item", selectTrashItem(db, a, item_id)), ...restoreAnyStatements(db, a, item_id)],
          activity: { target: item_id, summarySql: { sql: restoredSummary, binds: [a, item_id] } },
        },
        (rows) => {
          const item = rows.item[0] as TrashRow;
          return { restored: true, trash_id: item.id, kind: item.kind, target_id: item.target_id, item_count: item.item_count, detached: [] as string[] };
        },
      );
    }, slowly);
  },
});

const EMPTY_ALL_MAX = 10 * PURGE_CHUNK;

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
    const { db, principal: p } = ctx;
    const a = p.accountId;
    const slowly = async () => {
      if (!args.all === !args.item_ids) {
        throw invalid("Pass either item_ids (trash item ids from list_trash) or all: true to purge everything; not both, not neither.");
      }
      let items: TrashRow[];
      let notInTrash: string[] = [];
      if (args.item_ids) {
        const ids = [...new Set(args.item_ids)];
        items = await findTrashItems(db, a, ids);
        const found = new Set(items.map((i) => i.id));
        notInTrash = ids.filter((i) => !found.has(i));
      } else {
        items = await allTrashItems(db, a, EMPTY_ALL_MAX);
      }
      const purged: TrashRow[] = [];
      let rest = items;
      while (rest.length > 0) {
        const chunk = rest.slice(0, PURGE_CHUNK);
        const ids = chunk.map((c) => c.id);
        const along = await dependentItems(db, a, ids);
        const raced = conflict("the trash changed meanwhile (an item was restored or purged); list_trash shows what is there now, then call again.");
        await ctx.commit(
          {
            statements: [
              ctx.guard(allStillInTrash({ accountId: a, itemIds: ids }), raced),
              ...purgeStatements(db, a, ids),
            ],
            activity: {
              target: chunk.length === 1 ? chunk[0].id : null,
              summary: PURGED.text({
                count: chunk.length + along.length,
                items: [...chunk, ...along].map((c) => PURGED_ITEM.text({ id: c.id, kind: c.kind, title: c.title })).join(LIST_SEPARATOR),
              }),
            },
          },
          null,
        );
        purged.push(...chunk, ...along);
        const alongIds = new Set(along.map((r) => r.id));
        rest = rest.slice(PURGE_CHUNK).filter((r) => !alongIds.has(r.id));
      }
      const remaining = await countTrash(db, a);
      return {
        purged: purged.map((r) => ({ id: r.id, kind: r.kind, target_id: r.target_id, title: r.title, item_count: r.item_count })),
        not_in_trash: notInTrash,
        remaining,
      };
    };
    if (!args.item_ids || args.all) return slowly();
    // The usual case in one batch: every given id is in the trash; what goes is read before, what remains after.
    const ids = [...new Set(args.item_ids)];
    return fastOr(async (miss) => {
      const a = p.accountId;
      return ctx.commit(
        {
          statements: [
            ctx.guard(allInTrash({ accountId: a, itemIds: ids }), miss),
            named("purged", selectPurged(db, a, ids)),
            ...purgeStatements(db, a, ids),
            named("remaining", selectTrashCount(db, a)),
          ],
          activity: { target: ids.length === 1 ? ids[0] : null, summarySql: { sql: purgedSummary(ids), binds: [a, ...ids] } },
        },
        (rows) => ({
          purged: (rows.purged as TrashRow[]).map((r) => ({ id: r.id, kind: r.kind, target_id: r.target_id, title: r.title, item_count: r.item_count })),
          not_in_trash: [] as string[],
          remaining: (rows.remaining[0] as { n: number }).n,
        }),
      );
    }, slowly);
  },
});

export const trashTools: AnyTool[] = [listTrash, restoreFromTrash, emptyTrash];
