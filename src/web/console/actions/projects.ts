/** Projects: archive, unarchive and delete. */
import { one, quote, trashKeeps, utcWords, written, type ActionSpec, type Result } from "../action-spec.ts";
import { plural } from "../format.ts";

/** A project's tasks that are not done or cancelled, from a project result's counts. */
const unfinished = (r: Result) => {
  const c = r.project?.task_counts ?? {};
  return (c.total ?? 0) - (c.done ?? 0) - (c.cancelled ?? 0);
};

export const PROJECT_ACTIONS: Record<string, ActionSpec> = {
  archive_project: {
    tool: "archive_project",
    args: (f) => ({ project_id: one(f, "project_id") }),
    done: (r) => {
      const name = quote(r.project?.name);
      if (!r.changed) return `${name} was already archived.`;
      const n = unfinished(r);
      const tasks = n > 0 ? `its ${plural(n, "unfinished task")} stay as they are (agents still see and work on them)` : "its tasks stay as they are";
      return `Archived ${name}: ${tasks}, but no agent may add a task to it, move one in or out, rename it or unarchive it. It leaves the project tabs; Archived, under them, lists it.`;
    },
  },
  unarchive_project: {
    tool: "unarchive_project",
    args: (f) => ({ project_id: one(f, "project_id") }),
    done: (r) => (r.changed ? `Unarchived ${quote(r.project?.name)}: it is back among the project tabs.` : `${quote(r.project?.name)} was not archived.`),
  },
  delete_project: {
    tool: "delete_project",
    args: (f) => ({ project_id: one(f, "project_id") }),
    done: (r) => {
      if (r.already_in_trash) return "The project was already in the trash; Trash restores it.";
      const n = (r.item_count ?? 1) - 1;
      return `Moved the project${n > 0 ? ` and its ${plural(n, "task")}` : ""} to the trash; Trash restores ${n > 0 ? "them" : "it"} until ${utcWords(r.purge_after)}.`;
    },
    after: () => "/tasks",
    confirm: {
      subject: "project",
      field: "project_id",
      say: (f, days) => {
        if (f.subject !== "project" || !f.project) return null;
        const p = f.project;
        const n = p.n_total;
        const open = n - p.n_done - p.n_cancelled;
        return {
          heading: ["Delete the project ", ...written(p.name), "?"],
          facts: [
            n
              ? ["The project ", ...written(p.name), ` and its ${plural(n, "task")} (${open} of them unfinished) go to the trash together, as one item.`]
              : ["The project ", ...written(p.name), " goes to the trash. It has no tasks."],
            ...(n ? [[`Agents no longer see its tasks, and runs on them that are still going end.`]] : []),
            trashKeeps(days, n ? "them" : "it"),
          ],
          button: n ? `Delete the project and its ${plural(n, "task")}` : "Delete the project",
        };
      },
    },
  },
};
