import { z } from "zod";
import { conflict, invalid, notFound } from "../domain/errors.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import {
  attachLabelByName, deleteLabel, detachLabels, findLabel, findLabelByName, insertLabel, insertLabelIfMissing, LABEL_NOT_FOUND_HINT,
  foldName, listLabelRows, nameFree, readTaskLabelling, renameLabel, requireLabel, selectTaskLabels, labelDeletion,
  type LabelRow, type TaskLabel,
} from "../db/labels.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { taskIsLive } from "../db/tasks.ts";
import { defineTool, named, type ToolContext } from "../catalog/tool.ts";
import { fastOr } from "./fast.ts";
import { CREATED_LABEL, DELETED_LABEL, LABELLED, LABELLED_NEW, LIST_SEPARATOR, QUOTED_NAME, RENAMED_LABEL, UNLABELLED } from "../db/summaries.ts";
import {
  deletedLabelSummary, detachByNames, labelExists, renamedLabelSummary, labelSpelledOtherwise, labelledSummary, labelSummary, liveTaskHasAll, liveTaskHasNone,
  selectLabel, selectOnTask, selectSpelled, unlabelledSummary,
} from "../db/label-writes.ts";
import { cursor, labelId, LIMITS, limit, nextCursor, taskId } from "./schemas.ts";

const labelName = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(100)
  .meta({ detail: "label name; names match without regard to case" });

const labelNames = z
  .array(labelName)
  .min(1, "name at least one label")
  .max(LIMITS.batch, `at most ${LIMITS.batch} labels per call`);

const color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, "expected a color like #1f6feb")
  .transform((c) => c.toLowerCase())
  .meta({ detail: "#rrggbb" });

const labelShape = z.object({
  id: z.string(),
  name: z.string(),
  color: z.string().nullable(),
  created_at: z.string(),
  task_count: z.number().describe("live tasks carrying this label"),
});

const taskLabelShape = z.object({ id: z.string(), name: z.string() });

const toLabel = (r: LabelRow): z.infer<typeof labelShape> => ({
  id: r.id,
  name: r.name,
  color: r.color,
  created_at: r.created_at,
  task_count: r.task_count,
});

/** The names once each, compared without regard to case, first spelling kept. */
function distinctNames(names: string[]): string[] {
  const seen = new Set<string>();
  return names.filter((n) => {
    const key = foldName(n);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const sameName = (a: string, b: string) => foldName(a) === foldName(b);

const nameTaken = (name: string, other: string) =>
  conflict(`another label is already named "${other}" (names ignore case); pick another name for "${name}", or use that label.`);

const listLabels = defineTool({
  name: "list_labels",
  description: "The account's labels by name, each with its live task count.",
  input: z.strictObject({ limit, cursor }),
  output: z.object({ items: z.array(labelShape), next_cursor: nextCursor }),
  async handler(ctx, args) {
    const after = decodeCursor(args.cursor);
    const rows = await listLabelRows(ctx.db, ctx.principal.accountId, after ? String(after.k) : null, args.limit);
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.name, id: r.id }));
    return { items: items.map(toLabel), next_cursor };
  },
});

const createLabel = defineTool({
  name: "create_label",
  description: "Create a label, or return the one of that name (names ignore case; another color is refused). Returns label and created.",
  input: z.strictObject({ name: labelName, color: color.optional() }),
  output: z.object({ label: labelShape, created: z.boolean() }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    const slowly = async () => {
      const existing = await findLabelByName(ctx.db, a, args.name);
      if (existing && args.color !== undefined && args.color !== existing.color) {
        const has = existing.color ? `with color ${existing.color}` : "without a color";
        throw conflict(
          `a label named "${existing.name}" already exists ${has}, not ${args.color}; call create_label without color${existing.color ? ` (or with ${existing.color})` : ""} to use it, or choose another name.`,
        );
      }
      if (existing) return { label: toLabel(existing), created: false };
      const row = { id: newId(ID_PREFIX.label), accountId: a, name: args.name, color: args.color ?? null, now: ctx.now };
      return ctx.commit(
        {
          statements: [
            ctx.guard(nameFree({ accountId: a, labelId: row.id, name: row.name }), conflict(`a label named "${row.name}" was just created by another call; call create_label again to get it.`)),
            insertLabel(ctx.db, row),
          ],
          activity: { target: row.id, summary: CREATED_LABEL.text({ name: row.name }) },
        },
        { label: { id: row.id, name: row.name, color: row.color, created_at: row.now, task_count: 0 }, created: true },
      );
    };
    const row = { id: newId(ID_PREFIX.label), accountId: a, name: args.name, color: args.color ?? null, now: ctx.now };
    return fastOr(
      (miss) =>
        ctx.commit(
          {
            statements: [ctx.guard(nameFree({ accountId: a, labelId: row.id, name: row.name }), miss), insertLabel(ctx.db, row)],
            activity: { target: row.id, summary: CREATED_LABEL.text({ name: row.name }) },
          },
          { label: { id: row.id, name: row.name, color: row.color, created_at: row.now, task_count: 0 }, created: true },
        ),
      slowly,
    );
  },
});

const renameLabelTool = defineTool({
  name: "rename_label",
  description: "Rename a label everywhere; refused if another label has that name. Returns label.",
  input: z.strictObject({ label_id: labelId, name: labelName }),
  output: z.object({ label: labelShape, changed: z.boolean() }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    const slowly = async () => {
      const label = await requireLabel(ctx.db, a, args.label_id);
      if (label.name === args.name) return { label: toLabel(label), changed: false };
      const other = await findLabelByName(ctx.db, a, args.name);
      if (other && other.id !== label.id) throw nameTaken(args.name, other.name);
      return ctx.commit(
        {
          statements: [ctx.guard(nameFree({ accountId: a, labelId: label.id, name: args.name }), nameTaken(args.name, args.name)), renameLabel(ctx.db, a, label.id, args.name)],
          activity: { target: label.id, summary: RENAMED_LABEL.text({ old: label.name, name: args.name }) },
        },
        { label: toLabel({ ...label, name: args.name }), changed: true },
      );
    };
    return fastOr(
      (miss) =>
        ctx.commit(
          {
            statements: [
              ctx.guard(labelSpelledOtherwise({ accountId: a, labelId: args.label_id, name: args.name }), miss),
              ctx.guard(nameFree({ accountId: a, labelId: args.label_id, name: args.name }), miss),
              renameLabel(ctx.db, a, args.label_id, args.name),
              named("label", selectLabel(ctx.db, a, args.label_id)),
            ],
            activity: { target: args.label_id, summarySql: labelSummary(a, args.label_id, renamedLabelSummary(args.name)) },
          },
          (rows) => ({ label: toLabel(rows.label[0] as LabelRow), changed: true }),
        ),
      slowly,
    );
  },
});

const deleteLabelTool = defineTool({
  name: "delete_label",
  description: "Delete a label for good and take it off every task. Returns removed_from_tasks.",
  input: z.strictObject({ label_id: labelId }),
  output: z.object({
    label_id: z.string(),
    name: z.string().describe("the deleted label's name (a repeat names it as the first call did)"),
    removed_from_tasks: z.number(),
    changed: z.boolean().describe("false when the label was already deleted"),
  }),
  async handler(ctx, { label_id }) {
    const a = ctx.principal.accountId;
    const slowly = async () => {
      const label = await findLabel(ctx.db, a, label_id);
      if (!label) {
        // A repeat answers as the first call did (C7), from that call's record.
        const first = await labelDeletion(ctx.db, a, label_id);
        if (first) return { label_id, ...first, changed: false };
        throw notFound("label", label_id, LABEL_NOT_FOUND_HINT);
      }
      return ctx.commit(
        {
          statements: deleteLabel(ctx.db, a, label.id),
          activity: { target: label.id, summary: DELETED_LABEL.text({ name: label.name, count: label.task_count }) },
        },
        { label_id, name: label.name, removed_from_tasks: label.task_count, changed: true },
      );
    };
    return fastOr(
      (miss) =>
        ctx.commit(
          {
            statements: [ctx.guard(labelExists({ accountId: a, labelId: label_id }), miss), named("label", selectLabel(ctx.db, a, label_id)), ...deleteLabel(ctx.db, a, label_id)],
            activity: { target: label_id, summarySql: labelSummary(a, label_id, deletedLabelSummary()) },
          },
          (rows) => {
            const label = rows.label[0] as LabelRow;
            return { label_id, name: label.name, removed_from_tasks: label.task_count, changed: true };
          },
        ),
      slowly,
    );
  },
});

const taskLabelsNow = z.array(taskLabelShape).describe("the task's labels now, by name");
const labelTaskResult = z.object({
  task_id: z.string(),
  labels: taskLabelsNow,
  added: z.array(z.string()).describe("label names added by this call (empty: nothing to do)"),
});
const unlabelTaskResult = z.object({
  task_id: z.string(),
  labels: taskLabelsNow,
  removed: z.array(z.string()).describe("label names removed by this call (empty: nothing to do)"),
});

/** Runs the write, reading the task's labels back in the same batch. */
const quotedNames = (names: string[]) => names.map((name) => QUOTED_NAME.text({ name })).join(LIST_SEPARATOR);

async function commitAndReadLabels(ctx: ToolContext, task: string, statements: D1PreparedStatement[], summary: string): Promise<TaskLabel[]> {
  const a = ctx.principal.accountId;
  const { rows } = await ctx.commitWithResults({
    statements: [
      ctx.guard(taskIsLive({ taskId: task, accountId: a }), conflict(`task ${task} was deleted by another call at the same moment; list_tasks finds task ids.`)),
      ...statements,
      named("labels", selectTaskLabels(ctx.db, a, task)),
    ],
    activity: { target: task, summary },
  });
  return rows.labels as TaskLabel[];
}

const labelTask = defineTool({
  name: "label_task",
  description: "Add labels to a task by name, creating missing ones. Returns the task's labels and added.",
  input: z.strictObject({ task_id: taskId, labels: labelNames }),
  output: labelTaskResult,
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const slowly = async () => {
      const names = distinctNames(args.labels);
      const { task, current, known } = await readTaskLabelling(db, p.accountId, args.task_id, names);
      const toAdd = names.filter((n) => !current.some((l) => sameName(l.name, n)));
      if (toAdd.length === 0) return { task_id: task.id, labels: current, added: [] };

      const missing = toAdd.filter((n) => !known.some((l) => sameName(l.name, n)));
      const statements = [
        ...missing.map((name) => insertLabelIfMissing(db, { id: newId(ID_PREFIX.label), accountId: p.accountId, name, now: ctx.now })),
        ...toAdd.map((name) => attachLabelByName(db, p.accountId, task.id, name, ctx.now)),
      ];
      const added = toAdd.map((n) => known.find((l) => sameName(l.name, n))?.name ?? n);
      const summary = LABELLED.text({
        names: quotedNames(added),
        new: missing.length ? LABELLED_NEW.text({ names: missing.join(LIST_SEPARATOR) }) : "",
      });
      const labels = await commitAndReadLabels(ctx, task.id, statements, summary);
      return { task_id: task.id, labels, added };
    };
    // The usual case in one batch: a live task carrying none of the names; labels no one has yet are created.
    const names = distinctNames(args.labels);
    const json = JSON.stringify(names);
    return fastOr(async (miss) => {
      const statements = [
        ctx.guard(liveTaskHasNone({ taskId: args.task_id, accountId: p.accountId, names }), miss),
        ...names.map((name) => insertLabelIfMissing(db, { id: newId(ID_PREFIX.label), accountId: p.accountId, name, now: ctx.now })),
        ...names.map((name) => attachLabelByName(db, p.accountId, args.task_id, name, ctx.now)),
        named("added", selectSpelled(db, p.accountId, names)),
        named("labels", selectTaskLabels(db, p.accountId, args.task_id)),
      ];
      return ctx.commit(
        { statements, activity: { target: args.task_id, summarySql: { sql: labelledSummary, binds: [p.accountId, json] } } },
        (rows) => ({
          task_id: args.task_id,
          labels: rows.labels as TaskLabel[],
          added: (rows.added as { name: string }[]).map((r) => r.name),
        }),
      );
    }, slowly);
  },
});

const unlabelTask = defineTool({
  name: "unlabel_task",
  description: "Take labels off a task by name; unknown names are refused. Returns the task's labels and removed.",
  input: z.strictObject({ task_id: taskId, labels: labelNames }),
  output: unlabelTaskResult,
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const slowly = async () => {
      const names = distinctNames(args.labels);
      const { task, current, known } = await readTaskLabelling(db, p.accountId, args.task_id, names);
      const unknown = names.filter((n) => !known.some((l) => sameName(l.name, n)));
      if (unknown.length) {
        throw invalid(`labels: no label named ${unknown.map((n) => `"${n}"`).join(", ")} in this account; list_labels shows the names, get_task the task's labels.`);
      }
      const toRemove = current.filter((l) => names.some((n) => sameName(l.name, n)));
      if (toRemove.length === 0) return { task_id: task.id, labels: current, removed: [] };
      const removed = toRemove.map((l) => l.name);
      const labels = await commitAndReadLabels(
        ctx, task.id, [detachLabels(db, p.accountId, task.id, toRemove.map((l) => l.id))],
        UNLABELLED.text({ names: quotedNames(removed) }),
      );
      return { task_id: task.id, labels, removed };
    };
    // The usual case in one batch: a live task carrying every one of the names.
    const names = distinctNames(args.labels);
    const json = JSON.stringify(names);
    return fastOr(async (miss) => {
      const statements = [
        ctx.guard(liveTaskHasAll({ taskId: args.task_id, accountId: p.accountId, names }), miss),
        named("removed", selectOnTask(db, p.accountId, args.task_id, names)),
        detachByNames(db, p.accountId, args.task_id, names),
        named("labels", selectTaskLabels(db, p.accountId, args.task_id)),
      ];
      return ctx.commit(
        { statements, activity: { target: args.task_id, summarySql: { sql: unlabelledSummary, binds: [args.task_id, p.accountId, json] } } },
        (rows) => ({
          task_id: args.task_id,
          labels: rows.labels as TaskLabel[],
          removed: (rows.removed as TaskLabel[]).map((l) => l.name),
        }),
      );
    }, slowly);
  },
});

export const labelTools = [listLabels, createLabel, renameLabelTool, deleteLabelTool, labelTask, unlabelTask];
