import type { Actor, Path, Scenarios, World } from "./harness.ts";
import { blockedTask, claimedTask, lapsedClaim, newTask, project, recurringTask, richTask, soon, awaitingApproval } from "./states.ts";

export const path = (name: string, by: Actor, setup: (w: World) => Promise<Record<string, unknown>>, refusal?: RegExp): Path => ({ name, by, setup, refusal });

/** The writes on tasks: each on a fresh target and on one whose values are already written. */
export const TASK_SCENARIOS: Scenarios = {
  create_task: [
    path("a task with everything", "agent", async () => ({ title: "Book the venue", notes: "Ask for a quote", due_at: soon(5), priority: "high", estimate_minutes: 30, scope: ["src/venue/**", "events"] })),
    path("a recurring task", "person", async () => ({ title: "Weekly review", due_at: soon(2), recurrence: "FREQ=WEEKLY" })),
    path("a subtask", "person", async (w) => ({ title: "Call the caterer", parent_id: await newTask(w, { project_id: await project(w) }) })),
    path("with an idempotency key", "agent", async () => ({ title: "Keyed", idempotency_key: "create-keyed-1" })),
  ],
  update_task: [
    path("fields not yet set", "person", async (w) => ({ task_id: await newTask(w), notes: "Now with notes", due_at: soon(3), estimate_minutes: 45, scope: ["docs/launch.md"] })),
    path("written values replaced", "person", async (w) => ({ task_id: await richTask(w), title: "Write the launch email", notes: "Other notes" })),
    path("a task another agent holds", "person", async (w) => ({ task_id: await claimedTask(w, "rival"), priority: "urgent" })),
    path("a recurring task's rule", "person", async (w) => ({ task_id: await recurringTask(w), recurrence: "FREQ=WEEKLY" })),
  ],
  delete_task: [
    path("a task with subtasks", "person", async (w) => {
      const id = await richTask(w);
      await w.person.ok("decompose_task", { task_id: id, subtasks: [{ title: "Part one" }, { title: "Part two" }] });
      return { task_id: id };
    }),
    path("the agent's own task", "agent", async (w) => ({ task_id: await newTask(w, {}, "agent") })),
  ],
  complete_task: [
    path("an agent's sign-off", "agent", async (w) => ({ task_id: await claimedTask(w), note: "All done" })),
    path("a person's task", "person", async (w) => ({ task_id: await richTask(w) })),
    path("auto-OK", "agent", async (w) => ({ task_id: await claimedTask(w, "agent", { auto_ok: true }) })),
    path("a recurring task", "person", async (w) => ({ task_id: await recurringTask(w) })),
    path("a person signs off a task awaiting approval", "person", async (w) => ({ task_id: (await awaitingApproval(w)).task, note: "Fine" })),
    path("a blocked task", "person", async (w) => ({ task_id: await blockedTask(w) })),
  ],
  reopen_task: [
    path("a done task", "person", async (w) => {
      const id = await richTask(w);
      await w.person.ok("complete_task", { task_id: id });
      return { task_id: id, reason: "Found a typo" };
    }),
    path("awaiting approval", "person", async (w) => ({ task_id: (await awaitingApproval(w)).task, reason: "Not yet" })),
  ],
  block_task: [
    path("an open task", "agent", async (w) => ({ task_id: await newTask(w), reason: "waiting on legal" })),
    path("blocked for the same reason", "person", async (w) => ({ task_id: await blockedTask(w, "waiting on legal"), reason: "waiting on legal" })),
    path(
      "blocked for another reason",
      "person",
      async (w) => ({ task_id: await blockedTask(w, "waiting on the vendor's quote"), reason: "waiting on legal" }),
      /already blocked/,
    ),
  ],
  unblock_task: [
    path("a blocked task", "person", async (w) => ({ task_id: await blockedTask(w) })),
    path("a task in progress, not blocked", "agent", async (w) => ({ task_id: await claimedTask(w) })),
  ],
  claim_task: [
    path("an open task", "agent", async (w) => ({ task_id: await richTask(w) })),
    path("a lapsed claim taken over", "rival", async (w) => ({ task_id: await lapsedClaim(w, "agent") })),
    path("a person claims", "person", async (w) => ({ task_id: await newTask(w) })),
    path("assigned to it by a person", "agent", async (w) => ({ task_id: await newTask(w, { assignee: "bot" }) })),
    // Without task_id the next ready task: the repeat claims another one (so claim_task is not convergent).
    path("the next ready task", "agent", async (w) => {
      await newTask(w, { title: "Ready one", priority: "urgent" });
      await newTask(w, { title: "Ready two", priority: "urgent" });
      return {};
    }),
  ],
  assign_task: [
    path("unassigned", "person", async (w) => ({ task_id: await newTask(w), assignee: "bot" })),
    path("assigned to someone else", "person", async (w) => ({ task_id: await newTask(w, { assignee: "bot" }), assignee: "rival" })),
    // A release: by the holder, and by the person with the holder's run going.
    path("released by its holder", "agent", async (w) => ({ task_id: await claimedTask(w), assignee: null })),
    path("released by the person while its holder runs on it", "person", async (w) => {
      const id = await claimedTask(w);
      await w.agent.ok("start_run", { task_id: id });
      return { task_id: id, assignee: null };
    }),
  ],
  move_task: [
    path("into a project", "person", async (w) => ({ task_id: await richTask(w), project_id: await project(w) })),
    path("to another project", "person", async (w) => ({ task_id: await richTask(w, { project_id: await project(w, "A") }), project_id: await project(w, "B") })),
  ],
  snooze_task: [
    path("an open task", "agent", async (w) => ({ task_id: await newTask(w), until: soon(2) })),
    path("snoozed until another time", "person", async (w) => {
      const id = await newTask(w);
      await w.person.ok("snooze_task", { task_id: id, until: soon(1) });
      return { task_id: id, until: soon(4) };
    }),
  ],
  decompose_task: [path("a task with steps", "agent", async (w) => ({ task_id: await richTask(w), subtasks: [{ title: "Outline" }, { title: "Draft", notes: "800 words", scope: ["docs/post.md"] }] }))],
  add_dependency: [path("two tasks", "person", async (w) => ({ task_id: await newTask(w), depends_on_id: await blockedTask(w) }))],
  remove_dependency: [
    path("a dependency", "person", async (w) => {
      const [a, b] = [await newTask(w), await newTask(w)];
      await w.person.ok("add_dependency", { task_id: a, depends_on_id: b });
      return { task_id: a, depends_on_id: b };
    }),
  ],
  set_auto_ok: [
    path("not yet set", "person", async (w) => ({ task_id: await newTask(w), auto_ok: true })),
    path("set the other way", "person", async (w) => ({ task_id: await newTask(w, { auto_ok: true }), auto_ok: false })),
  ],
};
