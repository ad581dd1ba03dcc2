/**
 * Return addresses an attacker may send to sign-in or a console form, by
 * class of trick, and the invariant every answer must hold: a path of this
 * origin that a browser can't read as another host.
 */
import { expect } from "vitest";
import { ORIGIN } from "./web-helpers.ts";

/** Each must give the home page: every one leads off the origin, or is not a plain path. */
export const OFF_SITE: Record<string, string[]> = {
  "dot segments": ["/.//evil.example/x", "/..//evil.example", "/./..//evil.example", "/authorize/../..//evil.example", "/a/b/../../..//evil.example", "/a/..//evil.example"],
  "encoded dot segments": ["/%2e//evil.example", "/%2E%2E//evil.example", "/.%2e//evil.example", "/%2e.//evil.example", "/a/%2e%2e/%2f%2fevil.example", "/authorize/%2e%2e/%2e%2e//evil.example"],
  "encoded slashes": ["/%2f/evil.example", "/%2F%2Fevil.example", "/a/../%2f%2fevil.example"],
  backslashes: ["/\\evil.example", "\\/evil.example", "\\\\evil.example", "/.\\evil.example", "/a\\..\\..\\\\evil.example", "/x\\y"],
  "encoded backslashes": ["/%5cevil.example", "/%5Cevil.example", "/%2e/%5cevil.example", "/a?b=%5c"],
  "doubled and tripled slashes": ["//evil.example/x", "///evil.example/x", "////evil.example", "/.///evil.example"],
  schemes: ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "https://evil.example/steal", "http://evil.example", "https:evil.example", "https:/evil.example", "evil.example", "mailto:a@evil.example"],
  userinfo: ["https://user@evil.example/", "https://taskgate.test@evil.example/", "//user:pass@evil.example/", "@evil.example"],
  "control and whitespace characters": [
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "/%09/evil.example",
    " //evil.example",
    " /tasks",
    "\t/tasks",
    "/tasks\n",
    "/\u0000/evil.example",
    "/\u007f/evil.example",
    "/\u0085/evil.example",
    "/\u00a0/evil.example",
    "/\u2028/evil.example",
    "/\ufeff/evil.example",
    "/%0d%0aLocation:https://evil.example",
    "/ta sks",
  ],
  "over-long values": ["/" + "a".repeat(2000), "/?q=" + "x".repeat(3000), "/" + "é".repeat(400)],
  "not text": [""],
};

/** Paths of this origin that must come back as they are (the check must not refuse everything). */
export const LOCAL: [string, string][] = [
  ["/", "/"],
  ["/tasks", "/tasks"],
  ["/somewhere?x=1", "/somewhere?x=1"],
  ["/tasks?q=a%20b&status=open", "/tasks?q=a%20b&status=open"],
  ["/authorize?response_type=code&client_id=c&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s", "/authorize?response_type=code&client_id=c&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s"],
  ["/a/./b/../c", "/a/c"],
  ["/tasks/../agents", "/agents"],
  ["/@evil.example", "/@evil.example"],
  ["/x?next=//evil.example", "/x?next=//evil.example"],
  ["/" + "a".repeat(1999), "/" + "a".repeat(1999)],
];

/** Fragments the generated cases are made of: every kind of trick above, in any position. */
export const PIECES = ["/", "//", ".", "..", "%2e", "%2E%2e", "%2f", "%2F", "\\", "%5c", "%5C", "@", ":", "?", "#", "\t", "%09", " ", "evil.example", "a", "https:", "javascript:"];

/** `count` strings of up to 7 pieces each, from a fixed seed (the same cases every run). */
export function generatedCases(count: number): string[] {
  let seed = 0x7a5c6a7e;
  const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % 1_000_000;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + (next() % 7);
    let s = next() % 4 === 0 ? "" : "/";
    for (let j = 0; j < n; j++) s += PIECES[next() % PIECES.length];
    out.push(s);
  }
  return out;
}

/** A browser reads `answer` (a Location header) as a page of this origin, from any page of it. */
export function expectLocal(answer: string | null, input: string): void {
  const why = `${JSON.stringify(input)} → ${JSON.stringify(answer)}`;
  expect(typeof answer, why).toBe("string");
  const a = answer as string;
  expect(a.startsWith("/"), why).toBe(true);
  expect(/^[/\\][/\\]/.test(a), why).toBe(false);
  expect(/[\u0000-\u0020\u007f-\u009f\\]/.test(a), why).toBe(false);
  for (const from of [ORIGIN, `${ORIGIN}/`, `${ORIGIN}/a/b/c?d=e`]) {
    const url = new URL(a, from);
    expect(url.origin, why).toBe(ORIGIN);
    expect(url.username + url.password, why).toBe("");
    expect(/^[/\\][/\\]/.test(decodeURIComponent(url.pathname)), why).toBe(false);
  }
}
