/**
 * Decisions name the person: an account with two people, one deciding in the
 * web console and one through an app connected with OAuth. Each decision, a
 * person's claim and each activity entry keep the actor `human` (the consent
 * rules read it) and also name which person, by id and shown name, in the
 * tools' answers, the webhook payloads and the console's pages.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { connect, type TestClient } from "./helpers.ts";
import { act, flashOn, open, signedInPerson } from "./console.helpers.ts";
import { connectApp, mcp } from "./oauth-helpers.ts";
import { field } from "./web-helpers.ts";
import { addHook, fakeReceivers, sleep, waitFor } from "./webhooks.helpers.ts";
import type { Browser } from "./web-helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const localPart = (email: string) => email.slice(0, email.indexOf("@"));

/** Sets the signed-in person's shown name through the Settings form; the flash the page shows next. */
async function setName(b: Browser, name: string): Promise<string | null> {
  const { html } = await open(b, "/settings");
  const res = await b.post("/settings/name", { csrf: field(html, "csrf"), display_name: name });
  expect(res.status).toBe(303);
  return flashOn(b, "/settings");
}

/** A task the agent reported done, waiting for a person's sign-off. */
async function signoff(person: TestClient, agent: TestClient, agentName: string, title: string) {
  const { task } = await person.ok("create_task", { title, assignee: agentName });
  await agent.ok("claim_task", { task_id: task.id });
  const done = await agent.ok("complete_task", { task_id: task.id, note: `${title}: done` });
  expect(done.outcome).toBe("awaiting_approval");
  return { task, approvalId: done.approval.id as string };
}

describe("decisions name the person", () => {
  it("two people of one account: each one's approvals, answers, claims and activity name them, in answers, webhooks and the console", async () => {
    const seen = fakeReceivers();
    const ada = await signedInPerson("Two people");
    const { acc } = ada;
    const hook = await addHook(acc.accountId, "https://hooks.example.test/people");
    // The second person connects an app through OAuth, acting as themselves.
    const bea = await connectApp({ actAs: "self", access: "write" }, { acc });
    const beaApp = await mcp(bea.tokens.access_token);
    const human = await connect(acc.human); // a person's tg_ token that belongs to no person
    const agent = await connect(acc.agent);

    expect(await setName(ada.b, "  Ada Lovelace ")).toMatch(/^ok: Saved: .*Ada Lovelace/);
    const adaRef = { id: ada.personId, name: "Ada Lovelace" };
    const beaRef = { id: bea.personId, name: localPart(bea.email) };

    // Ada approves a sign-off in the console; Bea rejects another through her app.
    const first = await signoff(human, agent, acc.agentName, "Ship the release");
    const second = await signoff(human, agent, acc.agentName, "Write the changelog");
    await act(ada.b, `/tasks/${first.task.id}`, "approve", { task_id: first.task.id });
    const rejected = await beaApp.ok("reject_task", { task_id: second.task.id, reason: "the dates are wrong" });
    expect(rejected.approval).toMatchObject({ status: "rejected", decided_by: "human", decided_by_person: beaRef });

    const approved = await human.ok("get_approval", { approval_id: first.approvalId });
    expect(approved.approval).toMatchObject({ status: "approved", decided_by: "human", decided_by_person: adaRef });
    expect((await human.ok("get_approval", { approval_id: second.approvalId })).approval.decided_by_person).toEqual(beaRef);

    // A question the agent asks, answered no by Bea: get_task's latest answer names her.
    const { task: asked } = await human.ok("create_task", { title: "Budget" });
    await agent.ok("request_approval", { task_id: asked.id, question: "May I spend 20 EUR on a domain?" });
    await beaApp.ok("reject_task", { task_id: asked.id, reason: "not this month" });
    const detail = await agent.ok("get_task", { task_id: asked.id });
    expect(detail.latest_answer).toMatchObject({ answer: "no", decided_by: "human", decided_by_person: beaRef });
    expect(detail.pending_approval).toBeNull();

    // A person's token of no person decides as `human`, naming nobody.
    const third = await signoff(human, agent, acc.agentName, "Book the venue");
    const plain = await human.ok("approve_task", { task_id: third.task.id });
    expect(plain.approval).toMatchObject({ decided_by: "human", decided_by_person: null });

    // A person's claim names them while the assignee is `human`; an agent's assignment clears it.
    const { task: errand } = await human.ok("create_task", { title: "Pick up the keys" });
    const claimed = await beaApp.ok("claim_task", { task_id: errand.id });
    expect(claimed.task).toMatchObject({ assignee: "human", assignee_person: beaRef, status: "in_progress" });
    expect((await agent.ok("get_task", { task_id: errand.id })).task.assignee_person).toEqual(beaRef);
    const handed = await human.ok("assign_task", { task_id: errand.id, assignee: acc.agentName });
    expect(handed.task).toMatchObject({ assignee: acc.agentName, assignee_person: null });
    const mine = await beaApp.ok("assign_task", { task_id: errand.id, assignee: "human" });
    expect(mine.task.assignee_person).toEqual(beaRef);
    const agentTask = await agent.ok("list_tasks", { assignee: acc.agentName });
    expect(agentTask.items.every((t: { assignee_person: unknown }) => t.assignee_person === null)).toBe(true);

    // The feed names each person; an agent's entries and the tg_ token's name nobody.
    const feed = await human.ok("list_activity", { limit: 100 });
    const entry = (tool: string, target: string) => feed.items.find((e: { tool: string; target_id: string }) => e.tool === tool && e.target_id === target);
    expect(entry("approve_task", first.task.id)).toMatchObject({ actor: "human", person: adaRef });
    expect(entry("reject_task", second.task.id)).toMatchObject({ actor: "human", person: beaRef });
    expect(entry("claim_task", errand.id)).toMatchObject({ actor: "human", person: beaRef });
    expect(entry("approve_task", third.task.id)).toMatchObject({ actor: "human", person: null });
    expect(entry("complete_task", first.task.id)).toMatchObject({ actor: acc.agentName, person: null });
    const history = await agent.ok("get_task_history", { task_id: first.task.id });
    expect(history.items.find((e: { tool: string }) => e.tool === "approve_task")).toMatchObject({ person: adaRef });

    // The webhook payloads name the person beside completed_by, rejected_by and answered_by.
    await waitFor("the decisions' events", () => seen.filter((r) => r.url === hook.webhook.url && r.event.type !== "approval.requested").length >= 4);
    await sleep(1000);
    const events = seen.filter((r) => r.url === hook.webhook.url).map((r) => r.event);
    const of = (type: string, taskId: string) => events.find((e) => e.type === type && e.data.task.id === taskId)!.data;
    expect(of("task.completed", first.task.id)).toMatchObject({ completed_by: "human", completed_by_person: adaRef });
    expect(of("task.rejected", second.task.id)).toMatchObject({ rejected_by: "human", rejected_by_person: beaRef });
    expect(of("approval.answered", asked.id)).toMatchObject({ answer: "no", answered_by: "human", answered_by_person: beaRef });
    expect(of("task.completed", third.task.id)).toMatchObject({ completed_by: "human", completed_by_person: null });

    // The console shows the names: the activity page, the task's history and who holds a task.
    const feedPage = (await open(ada.b, "/activity")).html;
    expect(feedPage).toContain("Ada Lovelace (you)");
    expect(feedPage).toContain(beaRef.name);
    const taskPage = (await open(ada.b, `/tasks/${errand.id}`)).html;
    expect(taskPage).toMatch(new RegExp(`held by <strong>${beaRef.name.replace(/\./g, "\\.")}</strong>`));
    expect((await open(ada.b, `/tasks/${first.task.id}`)).html).toContain("Ada Lovelace (you)");
    // Bea sees Ada's name, and her own once she sets it.
    expect((await open(bea.browser, `/tasks/${first.task.id}`)).html).toContain("<strong>Ada Lovelace</strong>");
    expect(await setName(bea.browser, "Bea")).toMatch(/^ok: /);
    expect((await human.ok("get_approval", { approval_id: second.approvalId })).approval.decided_by_person).toEqual({ id: bea.personId, name: "Bea" });

    await Promise.all([beaApp.close(), human.close(), agent.close()]);
  });

  it("setting a shown name: saved and shown back; an empty or too long one is refused with what to fix, and nothing changes", async () => {
    const p = await signedInPerson("Names");
    expect((await open(p.b, "/settings")).html).toContain(`value="${localPart(p.email)}"`);
    expect(await setName(p.b, "Grace Hopper")).toMatch(/^ok: /);
    expect(field((await open(p.b, "/settings")).html, "display_name")).toBe("Grace Hopper");

    expect(await setName(p.b, "   ")).toBe("error: Your name: type the name to show for you (1 to 80 characters).");
    expect(await setName(p.b, "x".repeat(81))).toBe("error: Your name: at most 80 characters.");
    expect(await setName(p.b, "Two\nlines")).toBe("error: Your name: use one line of text, without tabs or line breaks.");
    expect(field((await open(p.b, "/settings")).html, "display_name")).toBe("Grace Hopper");

    // A form from another session is refused, and nothing changes.
    const res = await p.b.post("/settings/name", { csrf: "not-the-token", display_name: "Mallory" });
    expect(res.status).toBe(403);
    const human = await connect(p.acc.human);
    const feed = await human.ok("list_activity", { tool: "set_display_name" });
    expect(feed.items).toHaveLength(1);
    expect(feed.items[0]).toMatchObject({ actor: "human", target_id: p.personId, person: { id: p.personId, name: "Grace Hopper" } });
    await human.close();
  });
});
