/**
 * Failed sign-ins slow the one who fails with growing delays, per address and
 * per account, and never lock the owner out: a flood from one address leaves
 * the owner free to sign in from another; a guess spread over many addresses
 * delays everyone a little, never for long. Every refused attempt on a
 * person's email is in the account's activity feed.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { delayAfter, RULES } from "../src/web/throttle.ts";
import { connect, seedAccount } from "./helpers.ts";
import { addPerson, Browser, signIn, uniqueEmail } from "./web-helpers.ts";

const PASSWORD = "correct horse battery";

afterEach(() => vi.useRealTimers());

/** The clock the Worker reads, moved by hand. */
function clock(): { advance(ms: number): void } {
  let now = Date.now();
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(now);
  return {
    advance(ms: number) {
      now += ms;
      vi.setSystemTime(now);
    },
  };
}

const retryAfter = (res: Response) => Number(res.headers.get("retry-after"));

describe("sign-in throttling with growing delays", () => {
  it("one address guessing one email: a few free tries, then waits that double; the owner from another address signs in at once", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const time = clock();
    const attacker = "198.51.100.66";
    const waits: number[] = [];
    let wrong = 0;
    let refused = 0;
    // A flood: 200 tries, each as soon as the last answer allows.
    for (let i = 0; i < 200; i++) {
      const res = await signIn(new Browser(attacker), email, `guess ${i}`);
      if (res.status === 401) wrong++;
      else {
        expect(res.status).toBe(429);
        expect(await res.text()).toMatch(/Too many failed sign-ins\. Try again in \d+ (second|minute)s? \(at \d\d:\d\d(:\d\d)? UTC\)\./);
        refused++;
        if (i % 10 === 0) {
          waits.push(retryAfter(res));
          time.advance(retryAfter(res) * 1000);
        }
      }
      // The owner, from home, any time during the flood.
      if (i % 50 === 25) expect((await signIn(new Browser("203.0.113.10"), email, PASSWORD)).status, `owner at try ${i}`).toBe(303);
    }
    expect(wrong).toBeLessThan(RULES.email.free);
    expect(refused).toBeGreaterThan(150);
    // The waits double, until the failures that caused them leave the 15-minute window.
    expect(waits.slice(0, 9), JSON.stringify(waits)).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512]);
    expect((await signIn(new Browser("203.0.113.10"), email, PASSWORD)).status, "after the flood").toBe(303);
  });

  it("delays double from the first failure past the free ones, up to each key's cap", () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => delayAfter(RULES.pair, n))).toEqual([0, 0, 0, 2_000, 4_000, 8_000, 16_000]);
    expect(delayAfter(RULES.pair, 40)).toBe(RULES.pair.capMs);
    expect(delayAfter(RULES.email, 200)).toBe(5 * 60_000);
  });

  it("per address: a spray over many emails makes that address wait, for any email; others are not affected", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    clock();
    const address = "203.0.113.200";
    for (let i = 0; i < RULES.address.free; i++) expect((await signIn(new Browser(address), uniqueEmail("spray"), "x")).status).toBe(401);
    const blocked = await signIn(new Browser(address), email, PASSWORD);
    expect(blocked.status).toBe(429);
    expect(retryAfter(blocked)).toBe(RULES.address.baseMs / 1000);
    expect((await signIn(new Browser("203.0.113.201"), email, PASSWORD)).status).toBe(303);
  });

  it("per account: a guess spread over many addresses delays that email from every address, briefly; an unknown email alike", async () => {
    for (const known of [true, false]) {
      const acc = await seedAccount();
      const email = uniqueEmail(known ? "ada" : "ghost");
      if (known) await addPerson(acc.accountId, email, PASSWORD);
      const time = clock();
      for (let i = 0; i < RULES.email.free; i++) expect((await signIn(new Browser(`192.0.2.${i + 1}`), email, `wrong ${i}`)).status).toBe(401);
      const blocked = await signIn(new Browser("192.0.2.250"), email, PASSWORD);
      expect(blocked.status).toBe(429);
      expect(retryAfter(blocked)).toBe(RULES.email.baseMs / 1000);
      time.advance(RULES.email.baseMs);
      expect((await signIn(new Browser("192.0.2.250"), email, PASSWORD)).status).toBe(known ? 303 : 401);
      vi.useRealTimers();
    }
  });

  it("refused attempts are in the account's activity: each wrong password, and one entry per wait however many tries it refused", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const time = clock();
    const address = "198.51.100.77";
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await signIn(new Browser(address), email, "nope")).status);
    time.advance(RULES.pair.baseMs);
    for (let i = 0; i < 6; i++) statuses.push((await signIn(new Browser(address), email, "nope")).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429, 429, 429, 401, 429, 429, 429, 429, 429]);
    vi.useRealTimers();
    const human = await connect(acc.human);
    const failed = (await human.ok("list_activity", { tool: "sign_in_failed" })).items as { summary: string; actor: string; target_id: string }[];
    const throttled = (await human.ok("list_activity", { tool: "sign_in_throttled" })).items as { summary: string }[];
    expect(failed).toHaveLength(4);
    expect(failed[0].summary).toBe(`Sign-in refused for ${email} from ${address}: wrong password.`);
    expect(failed[0].actor).toBe("human");
    expect(throttled).toHaveLength(2);
    expect(throttled[0].summary).toMatch(new RegExp(`^Sign-in refused for ${email.replace(/[.+]/g, "\\$&")} from ${address.replace(/\./g, "\\.")}: too many failed sign-ins from this address; the next try is allowed in 4 seconds`));
    // An unknown email writes nothing anywhere.
    const before = (await env.DB.prepare("SELECT count(*) AS n FROM activity").first<{ n: number }>())!.n;
    await signIn(new Browser(address), uniqueEmail("nobody"), "x");
    expect((await env.DB.prepare("SELECT count(*) AS n FROM activity").first<{ n: number }>())!.n).toBe(before);
    await human.close();
  });
});
