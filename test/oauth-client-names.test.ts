/**
 * A registered client's name is for a person to read: every code point of the
 * invisible and formatting classes is refused (format, control, private use,
 * unassigned, surrogates, line and paragraph separators, default-ignorable
 * ones such as the Hangul fillers and variation selectors, spaces other than
 * U+0020, the braille blank), checked over all 1,114,112 code points, and
 * every other character is accepted.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { registrationProblem } from "../src/domain/client-registration.ts";
import { workerFetch } from "./helpers.ts";
import { ORIGIN } from "./web-helpers.ts";

const CLASSES: [string, RegExp][] = [
  ["Cc control", /^\p{Cc}$/u],
  ["Cf format", /^\p{Cf}$/u],
  ["Co private use", /^\p{Co}$/u],
  ["Cn unassigned", /^\p{Cn}$/u],
  ["Cs surrogate", /^\p{Cs}$/u],
  ["Zl line separator", /^\p{Zl}$/u],
  ["Zp paragraph separator", /^\p{Zp}$/u],
  ["default ignorable (fillers, joiners, variation selectors)", /^\p{Default_Ignorable_Code_Point}$/u],
  ["white space other than U+0020", /^(?! )\p{White_Space}$/u],
  ["braille pattern blank", /^\u2800$/u],
];

/** The characters the issue names, each of which must fall in a refused class. */
const NAMED: [string, number[]][] = [
  ["soft hyphen", [0xad]],
  ["combining grapheme joiner", [0x34f]],
  ["Arabic letter mark", [0x61c]],
  ["Hangul fillers", [0x115f, 0x1160, 0x3164, 0xffa0]],
  ["Mongolian vowel separator", [0x180e]],
  ["Mongolian free variation selectors", [0x180b, 0x180c, 0x180d, 0x180f]],
  ["interlinear annotation marks", [0xfff9, 0xfffa, 0xfffb]],
  ["tag characters", [0xe0001, ...Array.from({ length: 0x60 }, (_, i) => 0xe0020 + i)]],
  ["variation selectors", [...Array.from({ length: 16 }, (_, i) => 0xfe00 + i), ...Array.from({ length: 240 }, (_, i) => 0xe0100 + i)]],
  ["zero width and bidi", [0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069, 0xfeff]],
  ["no-break and wide spaces", [0xa0, 0x2007, 0x202f, 0x3000]],
  ["braille pattern blank", [0x2800]],
];

const classOf = (ch: string) => CLASSES.find(([, re]) => re.test(ch))?.[0] ?? null;
const asName = (cp: number) => `App${String.fromCodePoint(cp)}name`;

describe("client_name refuses invisible and formatting characters by Unicode property", () => {
  it("every code point of those classes is refused, and every other one accepted", () => {
    const refused = new Map<string, number>();
    const wronglyAccepted: string[] = [];
    const wronglyRefused: string[] = [];
    let accepted = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const ch = String.fromCodePoint(cp);
      const cls = cp === 0x3c || cp === 0x3e ? "markup" : classOf(ch);
      const problem = registrationProblem({ client_name: asName(cp), "client_name#fr": "Appli" });
      const localized = registrationProblem({ client_name: "App", "client_name#de": asName(cp) });
      if (cls) {
        refused.set(cls, (refused.get(cls) ?? 0) + 1);
        if (!problem || !localized) wronglyAccepted.push(`U+${cp.toString(16)}`);
        else if (cls !== "markup" && !problem.endsWith(`(it has U+${cp.toString(16).toUpperCase().padStart(4, "0")})`)) wronglyAccepted.push(`U+${cp.toString(16)}: ${problem}`);
      } else {
        accepted++;
        if (problem || localized) wronglyRefused.push(`U+${cp.toString(16)}`);
      }
    }
    expect(wronglyAccepted.slice(0, 20)).toEqual([]);
    expect(wronglyRefused.slice(0, 20)).toEqual([]);
    for (const [what, cps] of NAMED) for (const cp of cps) expect(classOf(String.fromCodePoint(cp)), `${what} U+${cp.toString(16)}`).not.toBeNull();
    expect(refused.get("Cf format")).toBeGreaterThan(150);
    expect(refused.get("Cn unassigned")).toBeGreaterThan(800_000);
    expect(accepted).toBeGreaterThan(140_000);
    console.log(`client_name: ${JSON.stringify(Object.fromEntries(refused))} refused, ${accepted} accepted`);
  });

  it("the registration endpoint refuses each named one with the code point to remove, storing nothing", async () => {
    const before = (await env.OAUTH_KV.list({ prefix: "client:" })).keys.length;
    const cps = [...NAMED.map(([, list]) => list[0]), 0x0, 0x7f, 0x85, 0xe000, 0xf0000, 0x10fffd, 0x378, 0xfdd0, 0xffff, 0x2028, 0x2029, 0xd800];
    for (const cp of cps) {
      const name = cp === 0xd800 ? "App\\ud800name" : JSON.stringify(asName(cp)).slice(1, -1);
      const res = await workerFetch(`${ORIGIN}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: `{"client_name":"${name}","redirect_uris":["http://127.0.0.1:33418/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code"]}`,
      });
      const body = (await res.json()) as { error: string; error_description: string };
      expect(res.status, `U+${cp.toString(16)}`).toBe(400);
      expect(body.error).toBe("invalid_client_metadata");
      expect(body.error_description).toContain(`(it has U+${cp.toString(16).toUpperCase().padStart(4, "0")})`);
    }
    expect((await env.OAUTH_KV.list({ prefix: "client:" })).keys.length).toBe(before);
    const ok = await workerFetch(`${ORIGIN}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Café Ōkami 東京 — App (β) ✓ 🙂", redirect_uris: ["http://127.0.0.1:33418/callback"], token_endpoint_auth_method: "none", grant_types: ["authorization_code"] }),
    });
    expect(ok.status).toBe(201);
  });
});
