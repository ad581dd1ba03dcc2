import { keptSince } from "../domain/retention.ts";
import { CREATED_PROJECT } from "../db/summaries.ts";
import { z } from "zod";
import { conflict, invalid, notFound } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import {
  insertProject, listProjectRows, locateProject, projectIsLive, PROJECT_NOT_FOUND_HINT,
  archiveSet, NOT_ARCHIVED, archivedProjectSummary, deletedProjectSummary, IS_ARCHIVED, projectUpdate,
  UNARCHIVE_SET, updatedProjectSummary, liveProjectIs, projectExportRows, projectSummary, requireProjectWithCounts,
  selectProjectWithCounts, setProject,
  type CountedProjectRow, type ProjectChanges, type ProjectRow, type TaskCountColumns,
} from "../db/projects.ts";
import { toTask } from "../db/tasks.ts";
import { moveToTrash } from "../db/trash.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { AGAIN, defineTool, named, type Condition, type ToolContext } from "../catalog/tool.ts";
import { cursor, idempotencyKey, limit, longText, nextCursor, projectId } from "./schemas.ts";
import { stepStatus, taskShape, trashedShape } from "./shapes.ts";

const projectName = z.string().trim().min(1, "must not be empty").max(200);

const taskCounts = z.object({
  total: z.number(),
  open: z.number(),
  in_progress: z.number(),
  blocked: z.number(),
  awaiting_approval: z.number(),
  done: z.number(),
  cancelled: z.number(),
}).describe("live tasks of the project by status");

export const projectShape = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  default_auto_ok: z.boolean().nullable().describe("auto-OK for new tasks in this project; null means the account's default"),
  archived_at: z.string().nullable(),
  version: z.number().describe("increases with every change; pass as expected_version to update_project"),
  created_at: z.string(),
  updated_at: z.string(),
  task_counts: taskCounts,
});

type Project = z.infer<typeof projectShape>;

const EMPTY_COUNTS: TaskCountColumns = {
  n_total: 0, n_open: 0, n_in_progress: 0, n_blocked: 0, n_awaiting_approval: 0, n_done: 0, n_cancelled: 0,
};

export function toProject(r: ProjectRow, c: TaskCountColumns = EMPTY_COUNTS): Project {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    default_auto_ok: r.default_auto_ok === null ? null : r.default_auto_ok === 1,
    archived_at: r.archived_at,
    version: r.version,
    created_at: r.created_at,
    updated_at: r.updated_at,
    task_counts: {
      total: c.n_total,
      open: c.n_open,
      in_progress: c.n_in_progress,
      blocked: c.n_blocked,
      awaiting_approval: c.n_awaiting_approval,
      done: c.n_done,
      cancelled: c.n_cancelled,
    },
  };
}

const changedProject = z.object({ project: projectShape, changed: z.boolean().describe("false when there was nothing to change") });

/**
 * A live project's write in one batch: guarded by `where` (the state the
 * outcome assumes), set by `set`, summarised from the row before, answered
 * with the project as written.
 */
function writeProjectAtOnce(
  ctx: ToolContext,
  miss: Error,
  o: { projectId: string; where: Condition; set: Condition; summary: Condition },
) {
  const { db, principal: p } = ctx;
  const a = p.accountId;
  return ctx.commit(
    {
      statements: [
        ctx.guard(liveProjectIs({ projectId: o.projectId, accountId: a, where: o.where }), miss),
        setProject(db, a, o.projectId, o.set, ctx.now),
        named("project", selectProjectWithCounts(db, a, o.projectId)),
      ],
      activity: { target: o.projectId, summarySql: projectSummary(a, o.projectId, o.summary) },
    },
    (rows) => {
      const row = rows.project[0] as CountedProjectRow;
      return { project: toProject(row, row), changed: true };
    },
  );
}

const listProjects = defineTool({
  name: "list_projects",
  description: "Projects in creation order, each with its live task counts by status.",
  input: z.strictObject({
    include_archived: z.boolean().default(false),
    limit,
    cursor,
  }),
  output: z.object({ items: z.array(projectShape), next_cursor: nextCursor }),
  async handler(ctx, args) {
    const after = decodeCursor(args.cursor);
    const rows = await listProjectRows(ctx.db, ctx.principal.accountId, {
      includeArchived: args.include_archived,
      after: after ? { k: String(after.k), id: after.id } : null,
      limit: args.limit,
    });
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.created_at, id: r.id }));
    return { items: items.map((r) => toProject(r, r)), next_cursor };
  },
});

const getProject = defineTool({
  name: "get_project",
  description: "One project with its task counts by status and settings, and new_tasks_auto_ok.",
  input: z.strictObject({ project_id: projectId }),
  output: z.object({
    project: projectShape,
    new_tasks_auto_ok: z.boolean().describe("auto-OK a new task here starts with: the project's default, else the account's"),
  }),
  async handler(ctx, { project_id }) {
    const row = await requireProjectWithCounts(ctx.db, ctx.principal.accountId, project_id);
    return { project: toProject(row, row), new_tasks_auto_ok: row.new_tasks_auto_ok === 1 };
  },
});

const createProject = defineTool({
  name: "create_project",
  description: "Create a project; default_auto_ok is the auto-OK of its new tasks (omitted: the account's). Returns project.",
  input: z.strictObject({
    name: projectName,
    description: longText.optional(),
    default_auto_ok: z.boolean().optional().meta({ detail: "may agents complete new tasks here without a person's approval; omit for the account's default" }),
    idempotency_key: idempotencyKey,
  }),
  output: z.object({ project: projectShape }),
  async handler(ctx, args) {
    const p = {
      id: newId(ID_PREFIX.project),
      accountId: ctx.principal.accountId,
      name: args.name,
      description: args.description ?? "",
      defaultAutoOk: args.default_auto_ok ?? null,
      now: ctx.now,
    };
    const row: ProjectRow = {
      id: p.id,
      name: p.name,
      description: p.description,
      default_auto_ok: p.defaultAutoOk === null ? null : p.defaultAutoOk ? 1 : 0,
      archived_at: null,
      version: 1,
      created_at: p.now,
      updated_at: p.now,
    };
    return ctx.commit(
      { statements: [insertProject(ctx.db, p)], activity: { target: p.id, summary: CREATED_PROJECT.text({ name: p.name }) } },
      { project: toProject(row) },
    );
  },
});

const updateProjectTool = defineTool({
  name: "update_project",
  description: "Overwrite a project's fields; expected_version refuses stale edits. Returns project.",
  input: z.strictObject({
    project_id: projectId,
    name: projectName.optional(),
    description: longText.optional(),
    default_auto_ok: z.boolean().nullable().optional().describe("null: the account's default"),
    expected_version: z.number().int().min(1).optional().meta({ detail: "the version you read; refused if the project has changed since" }),
  }),
  output: changedProject,
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    const changes: ProjectChanges = {};
    if (args.name !== undefined) changes.name = args.name;
    if (args.description !== undefined) changes.description = args.description;
    if (args.default_auto_ok !== undefined) changes.default_auto_ok = args.default_auto_ok === null ? null : args.default_auto_ok ? 1 : 0;
    const fields = Object.keys(changes) as (keyof ProjectChanges)[];
    return ctx.write({
      subject: `project ${args.project_id}`,
      // Every field given is set, at the expected version, when one of them differs; nothing given writes nothing.
      apply: (miss) =>
        fields.length === 0
          ? Promise.reject(miss)
          : writeProjectAtOnce(ctx, miss, {
              projectId: args.project_id,
              ...projectUpdate(changes, args.expected_version),
              summary: updatedProjectSummary(changes),
            }),
      // Missed: not found, a stale expected_version (refused), or nothing that differs (a no-op).
      async diagnose() {
        const row = await requireProjectWithCounts(ctx.db, a, args.project_id);
        if (args.expected_version !== undefined && row.version !== args.expected_version) {
          throw conflict(
            `project ${row.id} has changed since version ${args.expected_version}: get_project shows the current version and values; apply your change to those and pass that version.`,
          );
        }
        return fields.some((f) => changes[f] !== row[f]) ? AGAIN : { project: toProject(row, row), changed: false };
      },
    });
  },
});

/** archive_project (archive) or unarchive_project: the change, or on a miss the project as it is (a no-op) or not found. */
function setArchived(ctx: ToolContext, project_id: string, archive: boolean) {
  const a = ctx.principal.accountId;
  return ctx.write({
    subject: `project ${project_id}`,
    apply: (miss) =>
      writeProjectAtOnce(ctx, miss, {
        projectId: project_id,
        where: archive ? NOT_ARCHIVED : IS_ARCHIVED,
        set: archive ? archiveSet(ctx.now) : UNARCHIVE_SET,
        summary: archivedProjectSummary(archive),
      }),
    async diagnose() {
      const row = await requireProjectWithCounts(ctx.db, a, project_id);
      return (row.archived_at !== null) === archive ? { project: toProject(row, row), changed: false } : AGAIN;
    },
  });
}

const archiveProject = defineTool({
  name: "archive_project",
  description: "Archive a project: it leaves default lists, its tasks stay. Returns project.",
  input: z.strictObject({ project_id: projectId }),
  output: changedProject,
  handler: (ctx, { project_id }) => setArchived(ctx, project_id, true),
});

const unarchiveProject = defineTool({
  name: "unarchive_project",
  description: "Bring an archived project back into default lists. Returns project.",
  input: z.strictObject({ project_id: projectId }),
  output: changedProject,
  handler: (ctx, { project_id }) => setArchived(ctx, project_id, false),
});

const deleteProject = defineTool({
  name: "delete_project",
  description: "Move a project and all its tasks to the trash as one restorable item. Returns trash_id and purge_after.",
  input: z.strictObject({ project_id: projectId }),
  output: trashedShape,
  async handler(ctx, { project_id }) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    return ctx.write({
      subject: `project ${project_id}`,
      // A live project goes to the trash with its tasks; the trash item takes its name and count from the rows.
      apply(miss) {
        const trash = moveToTrash(db, { accountId: a, kind: "project", targetId: project_id, deletedBy: actorName(p), deletedByToken: p.tokenId, now: ctx.now });
        return ctx.commit(
          {
            statements: [ctx.guard(projectIsLive({ projectId: project_id, accountId: a }), miss), named("item", trash.item), ...trash.marks],
            activity: { target: project_id, summarySql: projectSummary(a, project_id, deletedProjectSummary(trash.trashId)) },
          },
          (rows) => {
            const row = rows.item[0] as { id: string; purge_after: string; item_count: number };
            return { trash_id: row.id, purge_after: row.purge_after, item_count: row.item_count, already_in_trash: false };
          },
        );
      },
      // Missed: the project is in the trash already (answered with its item), or not found.
      async diagnose() {
        const where = await locateProject(db, a, project_id);
        if (!where) throw notFound("project", project_id, PROJECT_NOT_FOUND_HINT);
        if (where.trash_id === null) return AGAIN;
        return { trash_id: where.trash_id, purge_after: where.purge_after, item_count: where.item_count, already_in_trash: true };
      },
    });
  },
});

export const EXPORT_MAX_TASKS = 5_000;

const exportedTask = taskShape.extend({
  steps: z.array(z.object({
    id: z.string(), position: z.number(), text: z.string(), status: stepStatus, created_at: z.string(), updated_at: z.string(),
  })).describe("in order"),
  comments: z.array(z.object({
    id: z.string(), author: z.string(), body: z.string(), created_at: z.string(), updated_at: z.string(),
  })).describe("oldest first"),
  labels: z.array(z.string()).describe("label names"),
  waits_on: z.array(z.string()).describe("ids of the live tasks this task depends on"),
  calendar_links: z.array(z.object({
    provider: z.string(), event_id: z.string(), title: z.string(), starts_at: z.string(), ends_at: z.string(), url: z.string().nullable(),
  })),
});

function groupByTask<T extends { task_id: string }, V>(rows: T[], map: (row: T) => V): Map<string, V[]> {
  const out = new Map<string, V[]>();
  for (const r of rows) {
    const list = out.get(r.task_id);
    if (list) list.push(map(r));
    else out.set(r.task_id, [map(r)]);
  }
  return out;
}

const exportProject = defineTool({
  name: "export_project",
  description: "A project's live tasks, steps, comments, labels, dependencies and links as one document (up to 5,000 tasks).",
  input: z.strictObject({ project_id: projectId }),
  output: z.object({
    format: z.literal("taskgate.project.v1"),
    project: projectShape,
    tasks: z.array(exportedTask).describe("oldest first"),
    kept_since: z
      .string()
      .describe("how far back the account keeps history: activity entries and run events before this are removed daily (activity_retention_days)"),
  }),
  async handler(ctx, { project_id }) {
    const a = ctx.principal.accountId;
    const x = await projectExportRows(ctx.db, a, project_id, EXPORT_MAX_TASKS);
    const row = x.project;
    if (!row) throw notFound("project", project_id, PROJECT_NOT_FOUND_HINT);
    if (row.n_total > EXPORT_MAX_TASKS) {
      throw invalid(
        `project ${project_id} has ${row.n_total.toLocaleString("en-US")} tasks; export_project exports at most ${EXPORT_MAX_TASKS.toLocaleString("en-US")}. list_tasks with project_id pages through them, or move_task some into another project.`,
      );
    }
    const steps = groupByTask(x.steps, ({ task_id: _, ...s }) => s);
    const comments = groupByTask(x.comments, ({ task_id: _, ...c }) => c);
    const labels = groupByTask(x.labels, (l) => l.name);
    const waitsOn = groupByTask(x.dependencies, (d) => d.depends_on_id);
    const links = groupByTask(x.links, ({ task_id: _, ...l }) => l);
    return {
      format: "taskgate.project.v1" as const,
      project: toProject(row, row),
      tasks: x.tasks.map((t) => ({
        ...toTask(t),
        steps: steps.get(t.id) ?? [],
        comments: comments.get(t.id) ?? [],
        labels: labels.get(t.id) ?? [],
        waits_on: waitsOn.get(t.id) ?? [],
        calendar_links: links.get(t.id) ?? [],
      })),
      kept_since: keptSince(ctx.nowMs, row.activity_retention_days),
    };
  },
});

export const projectTools = [
  listProjects, getProject, exportProject, createProject, updateProjectTool, archiveProject, unarchiveProject, deleteProject,
];
