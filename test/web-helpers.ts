import { env } from "cloudflare:workers";
import { hashPassword } from "../src/domain/passwords.ts";
import { planInvite } from "../src/db/people-plans.ts";
import { placeEmailSql } from "../src/db/provisioning.ts";
import { ID_PREFIX, newId } from "../src/domain/ids.ts";
import { run, workerFetch } from "./helpers.ts";

/** The origin the Worker is reached at in the tests: https, so cookies are `__Host-` and Secure. */
export const ORIGIN = "https://taskgate.test";

/**
 * A browser without JavaScript: keeps cookies (by name, as the Worker sets
 * them), follows nothing by itself, and sends Origin on posts like a browser.
 */
export class Browser {
  cookies = new Map<string, string>();
  readonly address: string;
  /** How this browser reaches the Worker: its own bindings by default, or another env's (`via`). */
  readonly via: (url: URL, init: RequestInit) => Promise<Response>;
  constructor(address = "203.0.113.7", via: (url: URL, init: RequestInit) => Promise<Response> = workerFetch) {
    this.address = address;
    this.via = via;
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const maxAge = attrs.map((a) => a.trim().toLowerCase()).find((a) => a.startsWith("max-age="));
      if (maxAge === "max-age=0" || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    return { "cf-connecting-ip": this.address, accept: "text/html", ...(cookie ? { cookie } : {}), ...extra };
  }

  async get(path: string, extra: Record<string, string> = {}): Promise<Response> {
    const res = await this.via(new URL(path, ORIGIN), { headers: this.headers(extra), redirect: "manual" });
    this.remember(res);
    return res;
  }

  /** Posts a form; a list value sends the field once per item (checkboxes). `via` reaches the Worker another way (another env). */
  async post(
    path: string,
    form: Record<string, string | string[] | undefined>,
    extra: Record<string, string> = {},
    via: (url: URL, init: RequestInit) => Promise<Response> = this.via,
  ): Promise<Response> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const item of v === undefined ? [] : [v].flat()) body.append(k, item);
    const res = await via(new URL(path, ORIGIN), {
      method: "POST",
      headers: this.headers({ "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...extra }),
      body,
      redirect: "manual",
    });
    this.remember(res);
    return res;
  }
}

/** The value of a hidden (or any) input by name, from a page's HTML. */
export function field(html: string, name: string): string | undefined {
  const tag = [...html.matchAll(/<input\b[^>]*>/g)].map((m) => m[0]).find((t) => t.includes(`name="${name}"`));
  const value = tag ? /\bvalue="([^"]*)"/.exec(tag)?.[1] : undefined;
  return value?.replace(/&amp;/g, "&").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">");
}

/** An invitation as the admin CLI makes it: the setup link's path (with its one-time token). */
export async function invite(accountId: string, email: string, db: D1Database = env.DB): Promise<{ path: string; token: string }> {
  const plan = await planInvite(accountId, email, new Date().toISOString());
  await run(plan.directory);
  await run(plan.statements, db);
  return { path: `/setup?token=${encodeURIComponent(plan.secret)}`, token: plan.secret };
}

/** A person who already set a password (skips the setup page). */
export async function addPerson(accountId: string, email: string, password: string, db: D1Database = env.DB): Promise<string> {
  const id = newId(ID_PREFIX.person);
  const now = new Date().toISOString();
  if (db !== env.DB) await run([placeEmailSql(accountId, email)]);
  await db.prepare("INSERT INTO people (id, account_id, email, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(id, accountId, email, await hashPassword(password), now, now)
    .run();
  return id;
}

let emails = 0;
/** A fresh address for each test, so throttling in one test never touches another. */
export function uniqueEmail(who = "ada"): string {
  return `${who}.${Date.now().toString(36)}.${++emails}@example.com`;
}

/** Signs the browser in through the form; returns the final response (a 303). */
export async function signIn(b: Browser, email: string, password: string, returnTo?: string): Promise<Response> {
  const form = await b.get(returnTo ? `/signin?return_to=${encodeURIComponent(returnTo)}` : "/signin");
  const html = await form.text();
  return b.post("/signin", { csrf: field(html, "csrf"), return_to: field(html, "return_to"), email, password });
}

/** Headers every page must carry. */
export function expectPageSecurity(res: Response, expect: (v: unknown) => any, path?: string): void {
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("default-src 'none'");
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  // Only Settings loads a script (its push script, from this origin); every other page runs none.
  if (path === "/settings") expect(csp).toContain("script-src 'self'; worker-src 'self'");
  else expect(csp).not.toMatch(/script-src|worker-src/);
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
}
