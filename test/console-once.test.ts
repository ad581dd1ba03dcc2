/**
 * A console form that creates something creates it once: each render of the
 * form carries its own key, and the same form sent again (a second click, Back
 * and send) creates nothing more. The page after a create is reached by
 * post/redirect/get, and a secret shown on it travels sealed to the session
 * that made it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connect } from "./helpers.ts";
import { Browser, field, signIn } from "./web-helpers.ts";
import { flashOn, open, PASSWORD, signedInPerson } from "./console.helpers.ts";
import { addPerson, uniqueEmail } from "./web-helpers.ts";

const count = async (sql: string, id: string) => (await env.DB.prepare(sql).bind(id).first<{ n: number }>())!.n;

describe("forms that create something", () => {
  it("every such form carries a key of its own render", async () => {
    const p = await signedInPerson("Form keys");
    const human = await connect(p.acc.human);
    const { task } = await human.ok("create_task", { title: "Has a comment form" });
    const keyed: [string, string][] = [["/tasks", "idempotency_key"], [`/tasks/${task.id}`, "idempotency_key"], ["/apps", "form_id"], ["/webhooks", "form_id"]];
    for (const [path, name] of keyed) {
      const a = field((await open(p.b, path)).html, name);
      const b = field((await open(p.b, path)).html, name);
      expect(a, `${path} ${name}`).toMatch(/^(form-)?[0-9a-f-]{36}$/);
      expect(b, `${path}: a new render, a new key`).not.toBe(a);
    }
    await human.close();
  });

  it("a new-task form sent twice makes one task and leads both times to it; sent again with another title, it says so in plain words", async () => {
    const p = await signedInPerson("One task per form");
    const { html } = await open(p.b, "/tasks");
    const form = { csrf: field(html, "csrf"), back: "/tasks", idempotency_key: field(html, "idempotency_key"), title: "Water the plants" };
    const first = await p.b.post("/act/create_task", form);
    const location = first.headers.get("location");
    expect(location).toMatch(/^\/tasks\/tsk_[0-9a-z]{16}$/);
    const again = await p.b.post("/act/create_task", form);
    expect(again.headers.get("location"), "the replay leads to the first task").toBe(location);
    expect(await flashOn(p.b, location as string)).toBe("ok: Created “Water the plants”.");
    const edited = await p.b.post("/act/create_task", { ...form, title: "Water the garden" });
    expect(edited.status).toBe(303);
    expect(await flashOn(p.b, "/tasks")).toBe(
      "error: This form was already sent and did its work then; nothing more was done. Reload the page for a fresh form to send another.",
    );
    expect(await count("SELECT count(*) AS n FROM tasks WHERE account_id = ?", p.acc.accountId)).toBe(1);
  });

  it("a comment form sent twice adds one comment", async () => {
    const p = await signedInPerson("One comment per form");
    const human = await connect(p.acc.human);
    const { task } = await human.ok("create_task", { title: "Talk about it" });
    const { html } = await open(p.b, `/tasks/${task.id}`);
    const form = { csrf: field(html, "csrf"), back: `/tasks/${task.id}`, idempotency_key: field(html, "idempotency_key"), task_id: task.id, body: "Bulbs arrive Friday." };
    for (let i = 0; i < 2; i++) expect((await p.b.post("/act/comment", form)).status).toBe(303);
    expect((await human.ok("list_comments", { task_id: task.id })).items.map((c: { body: string }) => c.body)).toEqual(["Bulbs arrive Friday."]);
    // A fresh render is a new form: it adds the next comment.
    const next = await open(p.b, `/tasks/${task.id}`);
    await p.b.post("/act/comment", { ...form, idempotency_key: field(next.html, "idempotency_key"), body: "And the soil." });
    expect((await human.ok("list_comments", { task_id: task.id })).items).toHaveLength(2);
    await human.close();
  });

  it("a new token's secret opens only for the session that made it, and only on the next page", async () => {
    const p = await signedInPerson("Sealed to the session");
    const { html } = await open(p.b, "/apps");
    const made = await p.b.post("/apps/tokens", { csrf: field(html, "csrf"), form_id: field(html, "form_id"), kind: "human", scope: "read" });
    expect(made.status).toBe(303);
    const carried = made.headers.getSetCookie().find((c) => /^(__Host-)?tg_new_token=/.test(c)) as string;
    expect(carried).toMatch(/HttpOnly; SameSite=Lax; Max-Age=60/);
    const [name, sealed] = carried.split(";")[0].split("=");

    // Another person of the same account, handed the cookie, sees no secret.
    const other = new Browser("203.0.113.8");
    const email = uniqueEmail();
    await addPerson(p.acc.accountId, email, PASSWORD);
    expect((await signIn(other, email, PASSWORD)).status).toBe(303);
    other.cookies.set(name, sealed);
    const theirs = await other.get("/apps");
    expect(await theirs.text()).not.toContain('aria-label="Token"');
    expect(theirs.headers.getSetCookie().join(";"), "and the cookie is cleared").toContain(`${name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`);

    const mine = await open(p.b, "/apps");
    expect(mine.html).toMatch(/<pre class="secret" aria-label="Token">tg_[A-Za-z0-9_-]{43}<\/pre>/);
    expect(p.b.cookies.has(name), "the page that shows it clears it").toBe(false);
    expect((await open(p.b, "/apps")).html).not.toContain('aria-label="Token"');
  });

  it("a shown-once secret is single-use on the server: its cookie replayed in the same session shows nothing", async () => {
    const p = await signedInPerson("Shown once");
    const cases: [string, string, Record<string, string | string[]>, string][] = [
      ["/apps", "/apps/tokens", { kind: "human", scope: "read" }, 'aria-label="Token"'],
      ["/webhooks", "/webhooks", { url: "https://hooks.example.com/taskgate", events: ["task.completed"] }, 'aria-label="Signing secret"'],
    ];
    for (const [pagePath, action, fields, secretMark] of cases) {
      const { html } = await open(p.b, pagePath);
      const made = await p.b.post(action, { csrf: field(html, "csrf"), form_id: field(html, "form_id"), ...fields });
      expect(made.status, action).toBe(303);
      const carried = made.headers.getSetCookie().find((c) => /^(__Host-)?tg_new_(token|webhook)=/.test(c)) as string;
      const [name, sealed] = carried.split(";")[0].split("=");
      const shown = await open(p.b, pagePath);
      expect(shown.html, `${pagePath}: shown the first time`).toContain(secretMark);
      // The same cookie again, within its minute, in the same session: nothing.
      for (let i = 0; i < 3; i++) {
        p.b.cookies.set(name, sealed);
        const replayed = await open(p.b, pagePath);
        expect(replayed.res.status).toBe(200);
        expect(replayed.html, `${pagePath}: replay ${i + 1}`).not.toContain(secretMark);
        expect(p.b.cookies.has(name), "and the replayed cookie is cleared").toBe(false);
      }
    }
  });
});
