/**
 * Sign-in never sends a browser off the site: the return address, by every
 * class of trick, through the function and through the Worker over HTTP
 * (signed in: GET /signin; signed out: POST /signin with the right password).
 */
import { describe, expect, it } from "vitest";
import { RETURN_TO_MAX, safeReturnTo, signInPath } from "../src/web/return-to.ts";
import { seedAccount } from "./helpers.ts";
import { expectLocal, generatedCases, LOCAL, OFF_SITE } from "./return-to-cases.ts";
import { addPerson, Browser, field, signIn, uniqueEmail } from "./web-helpers.ts";

const PASSWORD = "correct horse battery";
const ALL_OFF_SITE = Object.values(OFF_SITE).flat();

describe("safeReturnTo", () => {
  for (const [kind, cases] of Object.entries(OFF_SITE)) {
    it(`${kind}: the home page`, () => {
      for (const raw of cases) {
        const answer = safeReturnTo(raw);
        expectLocal(answer, raw);
        expect(answer, JSON.stringify(raw)).toBe("/");
      }
    });
  }

  it("a path of this origin comes back as a browser would resolve it", () => {
    for (const [raw, expected] of LOCAL) {
      expectLocal(safeReturnTo(raw), raw);
      expect(safeReturnTo(raw), raw).toBe(expected);
    }
    expect("/" + "a".repeat(RETURN_TO_MAX - 1)).toHaveLength(RETURN_TO_MAX);
  });

  it("anything that is not text is the home page", () => {
    for (const raw of [undefined, null, 42, ["/tasks"], { toString: () => "/tasks" }]) expect(safeReturnTo(raw)).toBe("/");
  });

  it("5,000 generated mixes of every trick give a path of this origin, and the answer is stable", () => {
    const cases = generatedCases(5000);
    let kept = 0;
    for (const raw of cases) {
      const answer = safeReturnTo(raw);
      expectLocal(answer, raw);
      expect(safeReturnTo(answer), JSON.stringify(raw)).toBe(answer);
      if (answer !== "/") kept++;
    }
    // The mix holds paths that stay here too: the check keeps them.
    expect(kept).toBeGreaterThan(100);
  });

  it("the sign-in path carries only a safe return address", () => {
    for (const raw of ALL_OFF_SITE) expect(signInPath(raw), JSON.stringify(raw)).toBe("/signin");
    expect(signInPath("/tasks?q=1")).toBe("/signin?return_to=%2Ftasks%3Fq%3D1");
  });
});

async function person(): Promise<{ email: string }> {
  const acc = await seedAccount();
  const email = uniqueEmail();
  await addPerson(acc.accountId, email, PASSWORD);
  return { email };
}

describe("sign-in over HTTP never redirects off the site", () => {
  it("signed in: GET /signin?return_to=… answers 302 to a path of this origin", async () => {
    const { email } = await person();
    const b = new Browser();
    expect((await signIn(b, email, PASSWORD)).status).toBe(303);
    for (const raw of ALL_OFF_SITE) {
      const res = await b.get(`/signin?return_to=${encodeURIComponent(raw)}`);
      expect(res.status, JSON.stringify(raw)).toBe(302);
      const location = res.headers.get("location") as string;
      expectLocal(location, raw);
      expect(location, JSON.stringify(raw)).toBe("/");
    }
    // As the attack sent it, unencoded in the query.
    for (const raw of ["/.//evil.example/x", "/..//evil.example", "/%2e//evil.example", "/authorize/../..//evil.example"]) {
      const res = await b.get(`/signin?return_to=${raw}`);
      expect(res.headers.get("location"), raw).toBe("/");
    }
    for (const [raw, expected] of LOCAL) {
      const res = await b.get(`/signin?return_to=${encodeURIComponent(raw)}`);
      expect(res.headers.get("location"), raw).toBe(expected);
    }
  });

  it("signed out: POST /signin with the right password answers 303 to a path of this origin", async () => {
    const { email } = await person();
    const b = new Browser();
    const csrf = field(await (await b.get("/signin")).text(), "csrf");
    for (const raw of [...OFF_SITE["dot segments"], ...OFF_SITE["encoded dot segments"], ...OFF_SITE.backslashes, "//evil.example/x", "///evil.example", "https://user@evil.example/", "/\t/evil.example", "/%09/evil.example", "/" + "a".repeat(2000)]) {
      const res = await b.post("/signin", { csrf, return_to: raw, email, password: PASSWORD });
      expect(res.status, JSON.stringify(raw)).toBe(303);
      const location = res.headers.get("location") as string;
      expectLocal(location, raw);
      expect(location, JSON.stringify(raw)).toBe("/");
    }
    const res = await b.post("/signin", { csrf, return_to: "/tasks/../agents?x=1", email, password: PASSWORD });
    expect(res.headers.get("location")).toBe("/agents?x=1");
  });

  it("the sign-in form never carries a foreign return address", async () => {
    for (const raw of ["/.//evil.example/x", "/%2E%2E//evil.example", "/\\evil.example"]) {
      const html = await (await new Browser().get(`/signin?return_to=${encodeURIComponent(raw)}`)).text();
      expect(field(html, "return_to"), raw).toBe("/");
    }
  });
});
