import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asServer, connect, createToken, seedAccount, type TestClient } from "./helpers.ts";

/**
 * A call's work grows with the rows it touches (docs/limits-and-errors.md):
 * on a root task with N subtasks, one of them claimed by another agent, an
 * agent's refused delete_task, the person's delete_task (the whole tree to
 * the trash) and a move_task that changes nothing each take at most
 * GROWTH_LIMIT× as long for 4× the subtasks. A walk that reads the account's
 * tasks once per task of the tree (a quadratic call) grows about 16×. Only
 * ratios are compared, never a wall-clock limit; each figure is the median of
 * SAMPLES calls (the tree is restored from the trash between deletes).
 */

const SIZES = [250, 1000] as const;
const GROWTH_LIMIT = 5;
const SAMPLES = 3;
const CALLS = ["refused agent delete", "person's delete", "no-op move"] as const;
type Call = (typeof CALLS)[number];

interface Tree {
  children: number;
  root: string;
  project: string;
  person: TestClient;
  other: TestClient;
}

/** An account whose project holds a root with `children` subtasks, the last claimed by agent `holder`; clients of the person and of agent `other`. */
async function tree(children: number): Promise<Tree> {
  const acc = await seedAccount(`Tree of ${children}`, "holder");
  const other = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "other" });
  const key = acc.accountId.slice(4, 12);
  const project = `prj_${key}treeproj`;
  const root = `tsk_${key}rootroot`;
  const now = new Date().toISOString();
  await asServer(env.DB, [
    env.DB.prepare("INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES (?1, ?2, 'Tree', ?3, ?3)").bind(project, acc.accountId, now),
    env.DB.prepare("INSERT INTO tasks (id, account_id, project_id, title, created_by, created_at, updated_at) VALUES (?1, ?2, ?3, 'Root', 'human', ?4, ?4)")
      .bind(root, acc.accountId, project, now),
    env.DB.prepare(
      `INSERT INTO tasks (id, account_id, project_id, parent_id, title, created_by, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?5 - 1)
       SELECT ?6 || printf('%08d', i), ?1, ?2, ?3, 'Part ' || i, 'human', ?4, ?4 FROM n`,
    ).bind(acc.accountId, project, root, now, children, `tsk_${key}`),
    env.DB.prepare(
      `UPDATE tasks SET status = 'in_progress', assignee = 'holder', claim_lease_minutes = 60, claim_expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 day')
        WHERE id = ?1 AND account_id = ?2`,
    ).bind(`tsk_${key}${String(children - 1).padStart(8, "0")}`, acc.accountId),
  ]);
  return { children, root, project, person: await connect(acc.human), other: await connect(other.secret) };
}

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await f();
  return { ms: performance.now() - start, value };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The median time of each call on the tree; every call is checked to do what it is named for. */
async function measure(t: Tree): Promise<Record<Call, number>> {
  const ms: Record<Call, number[]> = { "refused agent delete": [], "person's delete": [], "no-op move": [] };
  await t.person.ok("get_task", { task_id: t.root });
  for (let s = 0; s < SAMPLES; s++) {
    const move = await timed(() => t.person.ok("move_task", { task_id: t.root, project_id: t.project }));
    expect(move.value.moved).toBe(0);
    ms["no-op move"].push(move.ms);
    const refused = await timed(() => t.other.fails("delete_task", { task_id: t.root }));
    expect(refused.value).toContain("holder");
    ms["refused agent delete"].push(refused.ms);
    const deleted = await timed(() => t.person.ok("delete_task", { task_id: t.root }));
    expect(deleted.value.item_count).toBe(t.children + 1);
    ms["person's delete"].push(deleted.ms);
    await t.person.ok("restore_from_trash", { item_id: deleted.value.trash_id });
  }
  return Object.fromEntries(CALLS.map((c) => [c, median(ms[c])])) as Record<Call, number>;
}

describe("the cost of a call on a large task tree", () => {
  const trees: Tree[] = [];
  beforeAll(async () => {
    for (const n of SIZES) trees.push(await tree(n));
  }, 60_000);
  afterAll(async () => {
    for (const t of trees) await Promise.all([t.person.close(), t.other.close()]);
  });

  it(`grows at most ${GROWTH_LIMIT}× for 4× the subtasks: refused delete, trash, no-op move`, async () => {
    const [small, large] = [await measure(trees[0]), await measure(trees[1])];
    const growth = Object.fromEntries(CALLS.map((c) => [c, Number((large[c] / small[c]).toFixed(2))]));
    for (const c of CALLS) {
      expect(growth[c], `${c}: ${small[c].toFixed(1)} ms at ${SIZES[0]} subtasks, ${large[c].toFixed(1)} ms at ${SIZES[1]} (${JSON.stringify(growth)})`).toBeLessThanOrEqual(GROWTH_LIMIT);
    }
  }, 60_000);
});
