/**
 * The admin CLI's webhooks against the running `wrangler dev`'s database (a
 * Node test, no browser): `add-webhook --events all` stores all events, so
 * the endpoint receives the event types a later version adds too, and both
 * add-webhook and list-webhooks say `all`; a list stays the list it names.
 */
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { newConnectorKey } from "../../src/domain/crypto.ts";
import { admin, d1File } from "../../scripts/lib/e2e-harness.ts";
import { taskgate } from "./context.ts";

/** Nothing is delivered here, so the CLI may seal the secrets under a key of this test's own. */
const cli = (args: string[]) => admin(taskgate().persistTo, args, { CONNECTOR_KEY: newConnectorKey() }) as Promise<unknown>;

/** The events column as the CLI stored it, read from the server's SQLite file. */
function storedEvents(id: string): string | undefined {
  const db = new DatabaseSync(d1File(taskgate().persistTo), { readOnly: true });
  try {
    return (db.prepare("SELECT events FROM webhooks WHERE id = ?").get(id) as { events: string } | undefined)?.events;
  } finally {
    db.close();
  }
}

describe("admin CLI webhooks", () => {
  it("add-webhook --events all stores all events and says all; list-webhooks says all; a named list stays that list", async () => {
    const account = (await cli(["create-account", "--name", "CLI webhooks"])) as { id: string };
    const all = (await cli(["add-webhook", "--account", account.id, "--url", "https://hooks.example.com/all", "--events", "all"])) as { id: string; events: unknown };
    expect(all.events).toBe("all");
    expect(storedEvents(all.id)).toBe("all");
    const one = (await cli(["add-webhook", "--account", account.id, "--url", "https://hooks.example.com/done", "--events", "task.completed"])) as { id: string; events: unknown };
    expect(one.events).toEqual(["task.completed"]);
    expect(storedEvents(one.id)).toBe("task.completed");

    const listed = (await cli(["list-webhooks", "--account", account.id])) as { id: string; events: unknown }[];
    expect(Object.fromEntries(listed.map((w) => [w.id, w.events]))).toEqual({ [all.id]: "all", [one.id]: ["task.completed"] });
  }, 240_000); // five admin CLI runs, each through wrangler, take most of a minute on a busy machine
});
