/**
 * Generated input to every console form and query parameter: the forms and
 * parameters are read from the pages themselves (every <form>, every field,
 * every link's query), every action of the console is posted besides, and
 * each gets strings from fast-check with the full-text and URL syntax that
 * broke pages before (`"`, `*`, `%`, NUL, quotes, operators). No answer is a
 * 5xx; a query of punctuation only is answered with the task list and a
 * message saying what to search for.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ACTIONS } from "../src/web/console/actions.ts";
import { connect } from "./helpers.ts";
import { open, signedInPerson } from "./console.helpers.ts";
import { field } from "./web-helpers.ts";

const PAGES = ["/", "/tasks", "/agents", "/apps", "/apps?tokens=all", "/webhooks", "/trash", "/activity", "/settings"];

const NASTY = ['"', "*", "%", "\0", "'", "\\", "^", ":", "-", "()", "\"*\"", "%00", "%%", "%zz", "NEAR(", "a AND", "OR", "*a", "\u202e", "\ufeff", " ", "", "😀", "x".repeat(3000), "<b>", "&amp;", "?q=1&q=2"];

/** Strings of every kind: the nasty ones, unicode, binary, and long. */
const value = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY), weight: 3 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: fc.constantFrom('"', "*", "%", "\0", "'", " ", "(", ")", ":", "^", "-", "+", "a", "1"), maxLength: 12 }), weight: 3 },
);

interface Form {
  action: string;
  method: string;
  fields: Record<string, string>;
}

/** Every form of a page, with its fields as the page fills them. */
function formsOf(html: string): Form[] {
  const out: Form[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const attr = (name: string, text: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(text)?.[1];
    const fields: Record<string, string> = {};
    for (const f of m[2].matchAll(/<(input|select|textarea|button)\b([^>]*)>/g)) {
      const name = attr("name", f[2]);
      if (name) fields[name] = (attr("value", f[2]) ?? "").replace(/&amp;/g, "&").replace(/&quot;/g, '"');
    }
    out.push({ action: (attr("action", m[1]) ?? "").replace(/&amp;/g, "&"), method: (attr("method", m[1]) ?? "get").toLowerCase(), fields });
  }
  return out;
}

/** The query parameters a page's links and GET forms use, by path. */
function queryNames(html: string, forms: Form[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (path: string, name: string) => (out.get(path) ?? out.set(path, new Set()).get(path)!).add(name);
  for (const m of html.matchAll(/href="(\/[^"?#]*)\?([^"#]*)"/g)) for (const [k] of new URLSearchParams(m[2].replace(/&amp;/g, "&"))) add(m[1], k);
  for (const f of forms.filter((f) => f.method === "get")) for (const k of Object.keys(f.fields)) add(f.action, k);
  return out;
}

describe("the console answers generated input with a page, never a 5xx", () => {
  it("a search of punctuation only shows the task list and says what to search for", async () => {
    const p = await signedInPerson();
    for (const q of ['"', "*", "%", "\0", '"*"', "%%", " - "]) {
      const { res, html } = await open(p.b, `/tasks?q=${encodeURIComponent(q)}`);
      expect(res.status, JSON.stringify(q)).toBe(400);
      expect(html).toContain("Search: give at least one word or number to search for.");
    }
  });

  it("every form, field, action and query parameter, with generated values: 0 answers 5xx", async () => {
    const p = await signedInPerson("Fuzzed console");
    const agent = await connect(p.acc.agent);
    const taskId = (await agent.ok("create_task", { title: "Fuzz target", notes: "notes here" })).task.id as string;
    await agent.ok("request_approval", { task_id: taskId, question: "please look" });
    const other = (await agent.ok("create_task", { title: "To trash" })).task.id as string;
    await agent.ok("delete_task", { task_id: other });
    await agent.close();

    const pages = [...PAGES, `/tasks/${taskId}`, `/tasks/${taskId}/text/notes`];
    const forms: Form[] = [];
    const queries = new Map<string, Set<string>>();
    for (const path of pages) {
      const { res, html } = await open(p.b, path);
      expect(res.status, path).toBe(200);
      const found = formsOf(html);
      forms.push(...found);
      for (const [k, names] of queryNames(html, found)) for (const n of names) (queries.get(k) ?? queries.set(k, new Set()).get(k)!).add(n);
    }
    const posts = forms.filter((f) => f.method === "post" && f.action !== "/signout");
    const allFields = new Set(posts.flatMap((f) => Object.keys(f.fields)).filter((n) => n !== "csrf"));
    // Every action of the console, whether or not a page showed its form.
    for (const name of Object.keys(ACTIONS)) if (!posts.some((f) => f.action === `/act/${name}`)) posts.push({ action: `/act/${name}`, method: "post", fields: {} });
    for (const known of ["page", "cursor", "after", "tokens", "q", "project", "status", "assignee", "label", "due", "actor", "tool", "target"]) {
      for (const path of ["/", "/tasks", "/agents", "/apps", "/trash", "/activity"]) (queries.get(path) ?? queries.set(path, new Set()).get(path)!).add(known);
    }

    const failures: string[] = [];
    let requests = 0;
    const check = (what: string, res: Response) => {
      requests++;
      if (res.status >= 500) failures.push(`${res.status} ${what}`);
    };
    const csrf = async () => field((await open(p.b, "/settings")).html, "csrf") as string;
    let token = await csrf();

    // Query parameters: each one alone, and all of a path's at once.
    for (const [path, names] of queries) {
      for (const name of names) {
        for (const v of fc.sample(value, 6)) {
          const url = `${path}?${new URLSearchParams({ [name]: v })}`;
          check(`GET ${url.slice(0, 120)}`, await p.b.get(url));
        }
        // Raw, unencoded bytes and broken percent-encoding in the query string itself.
        for (const raw of ["%", "%zz", "%00", "%E2%80", '"', "*", "%22%2A"]) check(`GET ${path}?${name}=${raw}`, await p.b.get(`${path}?${name}=${raw}`));
      }
      for (const values of fc.sample(fc.array(value, { minLength: names.size, maxLength: names.size }), 5)) {
        const q = new URLSearchParams([...names].map((n, i) => [n, values[i]]));
        check(`GET ${path}?${q}`.slice(0, 160), await p.b.get(`${path}?${q}`));
      }
    }
    // Path parameters.
    for (const v of fc.sample(value, 10)) {
      check(`GET /tasks/${v}`, await p.b.get(`/tasks/${encodeURIComponent(v)}`));
      check(`GET /tasks/${taskId}/text/${v}`, await p.b.get(`/tasks/${taskId}/text/${encodeURIComponent(v)}`));
    }

    // Forms: each field with generated values (the others as the page filled them), then every field at once, and repeated.
    for (const f of posts) {
      const own = Object.keys(f.fields).filter((n) => n !== "csrf");
      for (const name of own.length ? own : [...allFields]) {
        for (const v of fc.sample(value, 4)) {
          const res = await p.b.post(f.action, { ...f.fields, csrf: token, [name]: v });
          check(`POST ${f.action} ${name}=${JSON.stringify(v).slice(0, 60)}`, res);
        }
      }
      const names = [...new Set([...own, ...allFields])];
      for (const values of fc.sample(fc.array(value, { minLength: names.length, maxLength: names.length }), 3)) {
        const res = await p.b.post(f.action, { csrf: token, ...Object.fromEntries(names.map((n, i) => [n, [values[i], values[(i + 1) % values.length]]])) });
        check(`POST ${f.action} all fields`, res);
      }
      token = await csrf();
    }
    expect(failures).toEqual([]);
    expect(posts.length).toBeGreaterThanOrEqual(Object.keys(ACTIONS).length);
    console.log(`console fuzz: ${requests} requests over ${posts.length} forms and ${[...queries.values()].reduce((n, s) => n + s.size, 0)} query parameters, ${failures.length} answered 5xx`);
  }, 180_000);
});
