import { z } from "zod";
import { conflict, invalid, notFound } from "../domain/errors.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import {
  attachLabelByName, deleteLabel, findLabelByName, insertLabel, insertLabelIfMissing, LABEL_NOT_FOUND_HINT, foldName, listLabelRows, nameFree,
  readLabelOrDeletion, readRenaming, readTaskLabelling, renameInTaskHistories, renameLabel, selectTaskLabels, type LabelRow, type TaskLabel,
} from "../db/labels.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { AGAIN, defineTool, named } from "../catalog/tool.ts";
import { CREATED_LABEL } from "../db/summaries.ts";
import {
  deletedLabelSummary, detachByNames, labelExists, renamedLabelSummary, labelSpelledOtherwise, labelledSummary, labelSummary, liveTaskCarriesSome,
  liveTaskLacksSome, selectLabel, selectOnTask, selectToAdd, unlabelledSummary,
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
    const row = { id: newId(ID_PREFIX.label), accountId: a, name: args.name, color: args.color ?? null, now: ctx.now };
    return ctx.write({
      subject: `label "${args.name}"`,
      apply: (miss) =>
        ctx.commit(
          {
            statements: [ctx.guard(nameFree({ accountId: a, labelId: row.id, name: row.name }), miss), insertLabel(ctx.db, row)],
            activity: { target: row.id, summary: CREATED_LABEL.text({ name: row.name }) },
          },
          { label: { id: row.id, name: row.name, color: row.color, created_at: row.now, task_count: 0 }, created: true },
        ),
      // Missed: a label has the name (the same one again, or refused for another color); none now: create it after all.
      async diagnose() {
        const existing = await findLabelByName(ctx.db, a, args.name);
        if (!existing) return AGAIN;
        if (args.color !== undefined && args.color !== existing.color) {
          const has = existing.color ? `with color ${existing.color}` : "without a color";
          throw conflict(
            `a label named "${existing.name}" already exists ${has}, not ${args.color}; call create_label without color${existing.color ? ` (or with ${existing.color})` : ""} to use it, or choose another name.`,
          );
        }
        return { label: toLabel(existing), created: false };
      },
    });
  },
});

const renameLabelTool = defineTool({
  name: "rename_label",
  description: "Rename a label everywhere; refused if another label has that name. Returns label.",
  input: z.strictObject({ label_id: labelId, name: labelName }),
  output: z.object({ label: labelShape, changed: z.boolean() }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    return ctx.write({
      subject: `label ${args.label_id}`,
      apply: (miss) =>
        ctx.commit(
          {
            statements: [
              ctx.guard(labelSpelledOtherwise({ accountId: a, labelId: args.label_id, name: args.name }), miss),
              ctx.guard(nameFree({ accountId: a, labelId: args.label_id, name: args.name }), miss),
              renameLabel(ctx.db, a, args.label_id, args.name),
              renameInTaskHistories(ctx.db, a, args.label_id),
              named("label", selectLabel(ctx.db, a, args.label_id)),
            ],
            activity: { target: args.label_id, summarySql: labelSummary(a, args.label_id, renamedLabelSummary(args.name)) },
          },
          (rows) => ({ label: toLabel(rows.label[0] as LabelRow), changed: true }),
        ),
      // Missed: no such label, already spelled so (a no-op), or another label has the name.
      async diagnose() {
        const { label, named: other } = await readRenaming(ctx.db, a, args.label_id, args.name);
        if (!label) throw notFound("label", args.label_id, LABEL_NOT_FOUND_HINT);
        if (label.name === args.name) return { label: toLabel(label), changed: false };
        if (other && other.id !== label.id) throw nameTaken(args.name, other.name);
        return AGAIN;
      },
    });
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
    return ctx.write({
      subject: `label ${label_id}`,
      apply: (miss) =>
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
      // Missed: no such label. A repeat answers as the first call did (C7), from that call's record.
      async diagnose() {
        const { label, deletion } = await readLabelOrDeletion(ctx.db, a, label_id);
        if (label) return AGAIN;
        if (deletion) return { label_id, ...deletion, changed: false };
        throw notFound("label", label_id, LABEL_NOT_FOUND_HINT);
      },
    });
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

const labelTask = defineTool({
  name: "label_task",
  description: "Add labels to a task by name, creating missing ones. Returns the task's labels and added.",
  input: z.strictObject({ task_id: taskId, labels: labelNames }),
  output: labelTaskResult,
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    // A live task lacking some of the names: those are added, and labels no one has yet are created.
    const names = distinctNames(args.labels);
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) =>
        ctx.commit(
          {
            statements: [
              ctx.guard(liveTaskLacksSome({ taskId: args.task_id, accountId: p.accountId, names }), miss),
              named("added", selectToAdd(db, p.accountId, args.task_id, names)),
              ...names.map((name) => insertLabelIfMissing(db, { id: newId(ID_PREFIX.label), accountId: p.accountId, name, now: ctx.now })),
              ...names.map((name) => attachLabelByName(db, p.accountId, args.task_id, name, ctx.now)),
              named("labels", selectTaskLabels(db, p.accountId, args.task_id)),
            ],
            activity: { target: args.task_id, summarySql: labelledSummary({ accountId: p.accountId, taskId: args.task_id, names }) },
          },
          (rows) => ({
            task_id: args.task_id,
            labels: rows.labels as TaskLabel[],
            added: (rows.added as { name: string }[]).map((r) => r.name),
          }),
        ),
      // Missed: the task is missing or in the trash (readTaskLabelling says which), or carries every name (a no-op).
      async diagnose() {
        const { task, current } = await readTaskLabelling(db, p.accountId, args.task_id, names);
        const lacking = names.some((n) => !current.some((l) => sameName(l.name, n)));
        return lacking ? AGAIN : { task_id: task.id, labels: current, added: [] };
      },
    });
  },
});

const unlabelTask = defineTool({
  name: "unlabel_task",
  description: "Take labels off a task by name; unknown names are refused. Returns the task's labels and removed.",
  input: z.strictObject({ task_id: taskId, labels: labelNames }),
  output: unlabelTaskResult,
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    // A live task carrying some of the names, every one of them a label: those it carries are taken off.
    const names = distinctNames(args.labels);
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) =>
        ctx.commit(
          {
            statements: [
              ctx.guard(liveTaskCarriesSome({ taskId: args.task_id, accountId: p.accountId, names }), miss),
              named("removed", selectOnTask(db, p.accountId, args.task_id, names)),
              detachByNames(db, p.accountId, args.task_id, names),
              named("labels", selectTaskLabels(db, p.accountId, args.task_id)),
            ],
            activity: { target: args.task_id, summarySql: unlabelledSummary({ accountId: p.accountId, taskId: args.task_id, names }) },
          },
          (rows) => ({
            task_id: args.task_id,
            labels: rows.labels as TaskLabel[],
            removed: (rows.removed as TaskLabel[]).map((l) => l.name),
          }),
        ),
      // Missed: the task is missing or in the trash, a name is no label (refused), or the task carries none of them (a no-op).
      async diagnose() {
        const { task, current, known } = await readTaskLabelling(db, p.accountId, args.task_id, names);
        const unknown = names.filter((n) => !known.some((l) => sameName(l.name, n)));
        if (unknown.length) {
          throw invalid(`labels: no label named ${unknown.map((n) => `"${n}"`).join(", ")} in this account; list_labels shows the names, get_task the task's labels.`);
        }
        const carried = current.some((l) => names.some((n) => sameName(l.name, n)));
        return carried ? AGAIN : { task_id: task.id, labels: current, removed: [] };
      },
    });
  },
});

export const labelTools = [listLabels, createLabel, renameLabelTool, deleteLabelTool, labelTask, unlabelTask];
