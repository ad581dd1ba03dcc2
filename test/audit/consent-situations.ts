import { createToken } from "../helpers.ts";
import { openWorld, type World } from "./harness.ts";
import { EVENT, soon, trashItemOf } from "./states.ts";
import { snapshotAccount, type Snapshot } from "./observe.ts";

/**
 * The situations of the consent audit: one account each, built once through
 * the tools, around a task X that someone holds or a person decided. X sits
 * in project P under a parent T0 under an ancestor T00; it has two steps, a
 * label, a dependency on D, a calendar link, a comment and a subtask XC. A
 * paused agent `idle` and a second project P2 are there to be named.
 *
 * Where X is held, what it shows through other rows is there to be reached
 * too: the trash holds a third step of X (item `stepItem`), and a second
 * task Y held by X's holder, who trashed it (item `itemY`). Where no agent
 * completes X in the build (a pending question, blocked, held by the
 * person), D is unfinished: X's gate is closed, and a route through D that
 * opened it would show. Where X is claimed, its subtask Z is claimed by the
 * same agent: a refusal stopped by X must not name Z beside it.
 */

export type StateName =
  | "claimed" // agent bot holds X: in progress, lease running, a run with an event
  | "awaiting_signoff" // bot completed X without auto-OK: a sign-off waits for the person
  | "pending_question" // bot holds X and asked the person a question
  | "blocked" // bot holds X and blocked it
  | "held_by_person" // the person claimed X
  | "approved_by_person" // the person approved bot's sign-off: X is done
  | "trashed_by_person" // the person deleted X (with its subtask)
  | "archived_by_person"; // the person archived P

export const STATES: StateName[] = [
  "claimed", "awaiting_signoff", "pending_question", "blocked", "held_by_person", "approved_by_person", "trashed_by_person", "archived_by_person",
];

/** Who holds X in a state (an agent's name or `human`), or null when nobody does. */
export const HOLDER: Record<StateName, string | null> = {
  claimed: "bot",
  awaiting_signoff: "bot",
  pending_question: "bot",
  blocked: "bot",
  held_by_person: "human",
  approved_by_person: null,
  trashed_by_person: null,
  archived_by_person: null,
};

export interface Situation {
  state: StateName;
  world: World;
  /**
   * Named entities: X, XC, T0, T00, D (X waits on it), F (a task apart), P, P2, L (label id), step1, step2, link, comment, run,
   * approval, item (X in the trash), Z (X's held subtask, where X is claimed), stepItem (X's step in the trash), Y and itemY (a held task its holder trashed), token.
   */
  ids: Record<string, string>;
  /** Every row of the account as built: each call is observed against it, and it is put back after any call that changed something. */
  base: Snapshot;
}

export async function buildSituation(state: StateName): Promise<Situation> {
  const w = await openWorld();
  const ids: Record<string, string> = {};
  const person = w.person;
  const task = async (extra: Record<string, unknown>) => (await person.ok("create_task", extra)).task.id as string;
  ids.P = (await person.ok("create_project", { name: "Launch", description: "Everything for the launch" })).project.id;
  ids.P2 = (await person.ok("create_project", { name: "Other" })).project.id;
  ids.T00 = await task({ title: "Launch the site", project_id: ids.P });
  ids.T0 = await task({ title: "Write the pages", parent_id: ids.T00 });
  ids.X = await task({ title: "Write the launch post", notes: "Draft in the shared doc", parent_id: ids.T0, due_at: soon(2), priority: "high" });
  ids.D = await task({ title: "Pick the photos", project_id: ids.P });
  ids.F = await task({ title: "Book the venue" });
  ids.L = (await person.ok("create_label", { name: "audit" })).label.id;
  await person.ok("label_task", { task_id: ids.X, labels: ["audit"] });
  const steps = (await person.ok("add_steps", { task_id: ids.X, steps: ["Outline", "Draft"] })).steps as { id: string }[];
  [ids.step1, ids.step2] = steps.map((s) => s.id);
  ids.link = (await person.ok("link_calendar_event", { task_id: ids.X, ...EVENT })).link.id;
  await person.ok("add_dependency", { task_id: ids.X, depends_on_id: ids.D });
  // Where an agent completes X (in the build or the audit), what X waits on is done: an agent completes no task that waits on unfinished work.
  if (!GATE_CLOSED.includes(state)) await person.ok("complete_task", { task_id: ids.D });
  ids.comment = (await person.ok("comment_on_task", { task_id: ids.X, body: "Keep it short" })).comment.id;
  ids.XC = (await person.ok("decompose_task", { task_id: ids.X, subtasks: [{ title: "Find a quote" }] })).tasks[0].id;
  ids.token = (await createToken({ accountId: w.acc.accountId, kind: "human", scope: "read" })).id;
  await createToken({ accountId: w.acc.accountId, kind: "agent", scope: "write", agent: "idle" });
  await person.ok("pause_agent", { agent: "idle" });

  if (state === "claimed") {
    // A second held task in X's tree, a subtask Z its holder claimed: a refusal stopped by X names X, not Z too (the nearest route only).
    ids.Z = await task({ title: "Pick the quote", parent_id: ids.X });
    await w.agent.ok("claim_task", { task_id: ids.Z });
  }
  const claim = async () => {
    await w.agent.ok("claim_task", { task_id: ids.X });
    ids.run = (await w.agent.ok("start_run", { task_id: ids.X })).run.id;
    await w.agent.ok("log_run_event", { run_id: ids.run, kind: "progress", message: "Outline done" });
  };
  switch (state) {
    case "claimed":
      await claim();
      break;
    case "awaiting_signoff":
    case "approved_by_person":
      await claim();
      ids.approval = (await w.agent.ok("complete_task", { task_id: ids.X, note: "Published the draft" })).approval.id;
      if (state === "approved_by_person") await person.ok("approve_task", { task_id: ids.X });
      break;
    case "pending_question":
      await claim();
      ids.approval = (await w.agent.ok("request_approval", { task_id: ids.X, question: "May I spend 20 EUR on photos?" })).approval.id;
      break;
    case "blocked":
      await claim();
      await w.agent.ok("block_task", { task_id: ids.X, reason: "waiting on the photographer" });
      break;
    case "held_by_person":
      await person.ok("claim_task", { task_id: ids.X });
      break;
    case "trashed_by_person":
      await person.ok("delete_task", { task_id: ids.X });
      ids.item = await trashItemOf(w, ids.X);
      break;
    case "archived_by_person":
      await person.ok("archive_project", { project_id: ids.P });
      break;
  }
  const holder = HOLDER[state];
  if (holder !== null) {
    // What X shows through the trash: a step of X its holder trashed, and a second task its holder claimed and trashed.
    const by = holder === "human" ? person : w.agent;
    const spare = (await by.ok("add_steps", { task_id: ids.X, steps: ["Check the links"] })).steps as { id: string }[];
    await by.ok("delete_step", { step_id: spare[0].id });
    ids.stepItem = await trashItemOf(w, spare[0].id);
    ids.Y = await task({ title: "Rotate the keys" });
    await by.ok("claim_task", { task_id: ids.Y });
    await by.ok("delete_task", { task_id: ids.Y });
    ids.itemY = await trashItemOf(w, ids.Y);
  }
  return { state, world: w, ids, base: await snapshotAccount(w.acc.accountId) };
}

/** The states where no agent completes X: there D stays unfinished, and X's gate closed. */
const GATE_CLOSED: StateName[] = ["pending_question", "blocked", "held_by_person"];
