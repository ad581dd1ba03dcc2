import { describe, expect, it } from "vitest";
import { connect, ERAS, seedAccount, snapshotDb } from "./helpers.ts";
import { activityOf, closeAll } from "./lifecycle.helpers.ts";
import { act, flashOn, open, signedInPerson, unescape } from "./console.helpers.ts";
import { addHook, fakeReceivers, sleep, waitFor } from "./webhooks.helpers.ts";

/**
 * Questions a person answers by choice or in words: request_approval offers
 * choices (and may take words), approve_task answers with one of them or in
 * words, and the agent reads the answer as data in get_approval and get_task.
 */

const CHOICES = ["Blue", "Green", "Orange"];

/** A person, an agent, and a task the agent holds. */
async function setup(era: (typeof ERAS)[number]) {
  const acc = await seedAccount();
  const person = await connect(acc.human, era);
  const agent = await connect(acc.agent, era);
  const { task } = await person.ok("create_task", { title: "Pick the brand colour" });
  await agent.ok("claim_task", { task_id: task.id });
  return { acc, person, agent, taskId: task.id as string };
}

describe.each(ERAS)("questions with choices and words (%s era)", (era) => {
  it("a question with three choices is answered by a choice, another in words; the agent reads both answers in get_approval and get_task", async () => {
    const seen = fakeReceivers();
    const { acc, person, agent, taskId } = await setup(era);
    const hook = await addHook(acc.accountId, `https://hooks.example.test/choices-${era}`, "approval.requested,approval.answered");
    const mine = () => seen.filter((r) => r.url === hook.webhook.url);

    const asked = await agent.ok("request_approval", { task_id: taskId, question: "Which colour for the logo?", choices: [" Blue ", "Green", "Orange"] });
    expect(asked.approval).toMatchObject({ kind: "question", status: "pending", choices: CHOICES, accepts_words: false, answer: null });
    // The same question again is the same request; the pending one shows its choices everywhere a person looks.
    expect((await agent.ok("request_approval", { task_id: taskId, question: "Which colour for the logo?", choices: CHOICES })).changed).toBe(false);
    expect((await agent.ok("get_task", { task_id: taskId })).pending_approval).toMatchObject({ id: asked.approval.id, choices: CHOICES, accepts_words: false });
    const queue = await person.ok("list_pending_approvals", {});
    expect(queue.items[0]).toMatchObject({ id: asked.approval.id, choices: CHOICES, accepts_words: false, answer: null });

    const chosen = await person.ok("approve_task", { task_id: taskId, choice: "Green" });
    expect(chosen).toMatchObject({ changed: true, task: { status: "in_progress" }, approval: { id: asked.approval.id, status: "approved", answer: { choice: "Green", words: null } } });
    // The same answer again changes nothing.
    expect((await person.ok("approve_task", { task_id: taskId, choice: "Green" })).changed).toBe(false);

    const read = await agent.ok("get_approval", { approval_id: asked.approval.id });
    expect(read.approval).toMatchObject({ status: "approved", choices: CHOICES, accepts_words: false, answer: { choice: "Green", words: null }, decided_by: "human" });
    let view = await agent.ok("get_task", { task_id: taskId });
    expect(view.pending_approval).toBeNull();
    expect(view.latest_answer).toMatchObject({ id: asked.approval.id, answer: "yes", choice: "Green", words: null });

    // A question answered in words.
    const open = await agent.ok("request_approval", { task_id: taskId, question: "What should the tagline say?", accepts_words: true });
    expect(open.approval).toMatchObject({ choices: null, accepts_words: true, answer: null });
    const words = "Tasks your agents finish,\nanswers you give.";
    const wrote = await person.ok("approve_task", { task_id: taskId, answer: words });
    expect(wrote.approval).toMatchObject({ id: open.approval.id, status: "approved", answer: { choice: null, words } });
    expect((await agent.ok("get_approval", { approval_id: open.approval.id })).approval.answer).toEqual({ choice: null, words });
    view = await agent.ok("get_task", { task_id: taskId });
    expect(view.latest_answer).toMatchObject({ id: open.approval.id, answer: "yes", choice: null, words });

    // A yes/no question stays as it was: answered yes, no choice, no words.
    const plain = await agent.ok("request_approval", { task_id: taskId, question: "May I ship it?" });
    expect(plain.approval).toMatchObject({ choices: null, accepts_words: false });
    expect((await person.ok("approve_task", { task_id: taskId })).approval).toMatchObject({ status: "approved", answer: null });
    expect((await agent.ok("get_task", { task_id: taskId })).latest_answer).toMatchObject({ answer: "yes", choice: null, words: null });

    const history = (await activityOf(taskId)).map((a) => a.summary);
    expect(history).toContain(`answered question ${asked.approval.id}: chose "Green"; task stays in_progress`);
    expect(history).toContain(`answered question ${open.approval.id}: in words "${words}"; task stays in_progress`);

    await waitFor("the requests and answers", () => mine().length >= 6);
    await sleep(500);
    const events = mine().map((r) => r.event);
    const requested = events.find((e) => e.type === "approval.requested" && e.data.approval.id === asked.approval.id);
    expect(requested?.data.approval).toMatchObject({ choices: CHOICES, accepts_words: false });
    const answers = events.filter((e) => e.type === "approval.answered");
    expect(answers.map((e) => [e.data.approval.id, e.data.answer, e.data.choice, e.data.words])).toEqual([
      [asked.approval.id, "yes", "Green", null],
      [open.approval.id, "yes", null, words],
      [plain.approval.id, "yes", null, null],
    ]);
    await closeAll(person, agent);
  });

  it("a question with choices that takes words too is answered by either or both; declined with reject_task, it is a no with the reason", async () => {
    const { person, agent, taskId } = await setup(era);
    const asked = await agent.ok("request_approval", { task_id: taskId, question: "Which venue?", choices: ["Hall A", "Hall B"], accepts_words: true });
    expect(asked.approval).toMatchObject({ choices: ["Hall A", "Hall B"], accepts_words: true });
    const both = await person.ok("approve_task", { task_id: taskId, choice: "Hall B", answer: "If it has a projector." });
    expect(both.approval.answer).toEqual({ choice: "Hall B", words: "If it has a projector." });

    await agent.ok("request_approval", { task_id: taskId, question: "Which caterer?", choices: ["Ours", "Theirs"], accepts_words: true });
    const no = await person.ok("reject_task", { task_id: taskId, reason: "Neither; I will book one." });
    expect(no.approval).toMatchObject({ status: "rejected", reason: "Neither; I will book one.", answer: null });
    expect((await agent.ok("get_task", { task_id: taskId })).latest_answer).toMatchObject({ answer: "no", reason: "Neither; I will book one.", choice: null, words: null });
    await closeAll(person, agent);
  });

  it("bad choices are refused saying what to fix, and nothing is written", async () => {
    const { person, agent, taskId } = await setup(era);
    const before = await snapshotDb();
    const ask = (choices: unknown) => agent.fails("request_approval", { task_id: taskId, question: "Which?", choices });
    expect(await ask(["Only"])).toMatch(/choices: offer 2 to 8 choices \(leave choices out for a yes\/no question\)/);
    expect(await ask(["a", "b", "c", "d", "e", "f", "g", "h", "i"])).toMatch(/choices: offer at most 8 choices/);
    expect(await ask(["Yes", "no", "YES"])).toMatch(/choices: choices 1 and 3 are the same \("YES", ignoring case\); make each choice different/);
    expect(await ask(["Fine", "x".repeat(101)])).toMatch(/choices\.1: must be at most 100 characters; shorten it/);
    expect(await ask(["Fine", "   "])).toMatch(/choices\.1: must not be empty/);
    expect(await agent.fails("request_approval", { task_id: taskId, withdraw: true, choices: ["a", "b"] })).toMatch(/choices: leave it out with withdraw: true/);
    expect(await snapshotDb()).toBe(before);
    await closeAll(person, agent);
  });

  it("answers that do not fit the question are refused, listing its choices; a sign-off takes no choice or words", async () => {
    const { person, agent, taskId } = await setup(era);
    const asked = await agent.ok("request_approval", { task_id: taskId, question: "Which colour?", choices: CHOICES });
    const id = asked.approval.id;
    const before = await snapshotDb();
    expect(await person.fails("approve_task", { task_id: taskId })).toBe(
      `choice: required: question ${id} asks you to pick one of "Blue", "Green", "Orange"; reject_task answers no.`,
    );
    expect(await person.fails("approve_task", { task_id: taskId, choice: "Purple" })).toBe(
      `choice: "Purple" is not one of the choices of question ${id}: "Blue", "Green", "Orange". Send one of them exactly as written.`,
    );
    expect(await person.fails("approve_task", { task_id: taskId, choice: "green" })).toMatch(/Did you mean "Green"\?/);
    expect(await person.fails("approve_task", { task_id: taskId, choice: "Blue", answer: "and a bit of red" })).toMatch(
      new RegExp(`^answer: question ${id} takes no answer in words; pick one of its choices instead`),
    );
    expect(await snapshotDb()).toBe(before);
    await person.ok("approve_task", { task_id: taskId, choice: "Blue" });
    // Another answer to a question already answered: nothing is pending.
    expect(await person.fails("approve_task", { task_id: taskId, choice: "Green" })).toMatch(/has no pending question \(it is in_progress\); nothing to answer/);

    // A yes/no question takes no choice.
    await agent.ok("request_approval", { task_id: taskId, question: "Shall I go on?" });
    expect(await person.fails("approve_task", { task_id: taskId, choice: "Blue" })).toMatch(/^choice: question apr_\w+ offers no choices; leave choice out/);
    await person.ok("approve_task", { task_id: taskId });

    // A sign-off is approved or rejected, never answered by choice or in words.
    const done = await agent.ok("complete_task", { task_id: taskId });
    expect(done.outcome).toBe("awaiting_approval");
    const signoffBefore = await snapshotDb();
    expect(await person.fails("approve_task", { task_id: taskId, choice: "Blue" })).toMatch(
      new RegExp(`^choice: task ${taskId} waits for a sign-off \\(${done.approval.id}\\), which is approved or rejected, not answered by choice or in words`),
    );
    expect(await person.fails("approve_task", { task_id: taskId, answer: "ok" })).toMatch(/^answer: task \w+ waits for a sign-off/);
    expect(await snapshotDb()).toBe(signoffBefore);
    expect((await person.ok("approve_task", { task_id: taskId })).task.status).toBe("done");
    await closeAll(person, agent);
  });
});

describe("the console answers by choice or in words", () => {
  it("the inbox and the task page offer radio buttons in a fieldset and a labelled box for words; a form answers by choice, the agent reads it", async () => {
    const p = await signedInPerson("Console choices");
    const agent = await connect(p.acc.agent);
    const { task } = await agent.ok("create_task", { title: "Order <chairs> & tables" });
    await agent.ok("claim_task", { task_id: task.id });
    const asked = await agent.ok("request_approval", { task_id: task.id, question: "Which supplier?", choices: ["Acme <b>", "Bolt & Co", "Cargo \"C\""] });
    const id = asked.approval.id;

    for (const path of ["/", `/tasks/${task.id}`]) {
      const { html } = await open(p.b, path);
      expect(html).toContain('action="/act/answer_yes"');
      expect(html).toContain("<legend>Pick one</legend>");
      expect(html).toMatch(new RegExp(`<input type="radio" name="choice" value="Acme &lt;b&gt;" id="choice-${id}-0" required=""\\s*/?>`));
      expect(html).toContain('value="Bolt &amp; Co"');
      expect(html).toContain('value="Cargo &quot;C&quot;"');
      expect(html).not.toContain("<b>");
      expect(html).not.toContain(`id="words-${id}"`); // no words asked
      expect(html).toContain('action="/act/answer_no"');
    }
    // A choice picked from a notification's button shows checked, for this question only.
    expect((await open(p.b, `/tasks/${task.id}?approval=${id}&choice=1`)).html).toMatch(/value="Bolt &amp; Co" id="choice-apr_\w+-1" required="" checked=""/);
    expect((await open(p.b, `/tasks/${task.id}?approval=apr_0000000000000000&choice=1`)).html).not.toContain('checked=""');

    // A choice that is not offered is refused with the choices listed, on the page the form was on.
    expect((await act(p.b, `/tasks/${task.id}`, "answer_yes", { task_id: task.id, choice: "Dolly" })).status).toBe(303);
    expect(await flashOn(p.b, `/tasks/${task.id}`)).toMatch(/^error: choice: "Dolly" is not one of the choices of question apr_\w+: "Acme <b>", "Bolt & Co", "Cargo \\"C\\""/);

    expect((await act(p.b, `/tasks/${task.id}`, "answer_yes", { task_id: task.id, choice: "Bolt & Co" })).status).toBe(303);
    expect(await flashOn(p.b, `/tasks/${task.id}`)).toBe(`ok: Answered “Bolt & Co” to “Which supplier?”: the agent reads your answer, and “Order <chairs> & tables” stays in progress.`);
    expect((await agent.ok("get_approval", { approval_id: id })).approval.answer).toEqual({ choice: "Bolt & Co", words: null });
    expect((await agent.ok("get_task", { task_id: task.id })).latest_answer).toMatchObject({ answer: "yes", choice: "Bolt & Co", words: null });

    // A question in words: a labelled box, required; the answer keeps its lines.
    const words = await agent.ok("request_approval", { task_id: task.id, question: "Anything to add to the order?", accepts_words: true });
    const { html } = await open(p.b, `/tasks/${task.id}`);
    expect(html).toContain(`<label for="words-${words.approval.id}">Your answer</label>`);
    expect(html).toMatch(new RegExp(`<textarea id="words-${words.approval.id}" name="answer" maxlength="2000" rows="2" required=""`));
    expect(unescape(html)).not.toContain("<legend>");
    await act(p.b, `/tasks/${task.id}`, "answer_yes", { task_id: task.id, answer: "Two spare legs.\nDeliver Monday." });
    expect(await flashOn(p.b, `/tasks/${task.id}`)).toMatch(/^ok: Answered in words to “Anything to add to the order\?”/);
    expect((await agent.ok("get_task", { task_id: task.id })).latest_answer).toMatchObject({ choice: null, words: "Two spare legs.\nDeliver Monday." });
    await agent.close();
  });
});
