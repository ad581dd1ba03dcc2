import { expect } from "vitest";
import { seedAccount, type SeededAccount } from "./helpers.ts";
import { addPerson, Browser, field, signIn, uniqueEmail } from "./web-helpers.ts";

export const PASSWORD = "correct horse battery";

export interface Person {
  acc: SeededAccount;
  personId: string;
  email: string;
  b: Browser;
}

/** A fresh account with its four tokens and a person signed in through the sign-in form. */
export async function signedInPerson(name = "Console test"): Promise<Person> {
  const acc = await seedAccount(name);
  const email = uniqueEmail();
  const personId = await addPerson(acc.accountId, email, PASSWORD);
  const b = new Browser();
  const res = await signIn(b, email, PASSWORD);
  expect(res.status).toBe(303);
  return { acc, personId, email, b };
}

/** GET a console page; returns its status, HTML, D1 round trips and size in bytes. */
export async function open(b: Browser, path: string): Promise<{ res: Response; html: string; d1: number; bytes: number }> {
  const res = await b.get(path);
  const html = await res.text();
  return { res, html, d1: Number(res.headers.get("x-d1-calls")), bytes: new TextEncoder().encode(html).length };
}

/** Posts a console form the way the page does: its CSRF token, its way back, its fields. Returns the redirect. */
export async function act(b: Browser, page: string, action: string, fields: Record<string, string>): Promise<Response> {
  const { html } = await open(b, page);
  return b.post(`/act/${action}`, { csrf: field(html, "csrf"), back: page, ...fields });
}

/** The flash message the next page shows (and then forgets). */
export async function flashOn(b: Browser, path: string): Promise<string | null> {
  const { html } = await open(b, path);
  const m = /<div class="flash (ok|error)" role="(?:status|alert)">([\s\S]*?)<\/div>/.exec(html);
  return m ? `${m[1]}: ${unescape(m[2])}` : null;
}

export function unescape(s: string): string {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}
