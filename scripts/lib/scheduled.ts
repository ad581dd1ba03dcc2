/**
 * The Worker's Cron Triggers run locally. `wrangler dev` never fires them on
 * its own; it runs the scheduled handler when asked at
 * `/cdn-cgi/local/scheduled?cron=…`. `npm start` asks at the start of every
 * minute (UTC, as Cloudflare runs them) for each cron of wrangler.toml that
 * matches it, and `npm run -s scheduled -- daily|minute` asks once, now.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./d1.ts";

/** The crons of wrangler.toml's `[triggers]`, in its order. */
export function configuredCrons(toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8")): string[] {
  const line = /^\s*crons\s*=\s*\[([^\]]*)\]/m.exec(toml);
  if (!line) return [];
  return [...line[1].matchAll(/"([^"]*)"/g)].map((m) => m[1]);
}

/** `minute` is the cron that runs every minute; `daily` the other one. */
export function cronByName(name: string, crons = configuredCrons()): string | null {
  if (name === "minute") return crons.find((c) => c.trim() === "* * * * *") ?? null;
  if (name === "daily") return crons.find((c) => c.trim() !== "* * * * *") ?? null;
  return crons.includes(name) ? name : null;
}

const RANGES: [number, number][] = [
  [0, 59], // minute
  [0, 23], // hour
  [1, 31], // day of month
  [1, 12], // month
  [0, 7], // day of week (0 and 7: Sunday)
];

/** Whether one field (`*`, `5`, `1-5`, `*\/15`, `0,30`) allows `value`; null when the field is not understood. */
function fieldAllows(field: string, value: number, [lo, hi]: [number, number]): boolean | null {
  let allowed = false;
  for (const part of field.split(",")) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m) return null;
    const from = m[1] === "*" ? lo : Number(m[2]);
    const to = m[1] === "*" ? hi : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? hi : from;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (from < lo || to > hi || step < 1) return null;
    if (value >= from && value <= to && (value - from) % step === 0) allowed = true;
  }
  return allowed;
}

/**
 * Whether the 5-field cron matches the minute of `at` (UTC). Names (MON,
 * JAN) and L, W, # are not understood here: such a cron matches nothing and
 * `unsupportedCrons` names it.
 */
export function cronMatches(cron: string, at: Date): boolean {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return false;
  const dow = at.getUTCDay();
  const values = [at.getUTCMinutes(), at.getUTCHours(), at.getUTCDate(), at.getUTCMonth() + 1, dow];
  const ok = fields.map((f, i) => {
    const allows = fieldAllows(f, values[i], RANGES[i]);
    return i === 4 && allows === false && dow === 0 ? fieldAllows(f, 7, RANGES[4]) : allows;
  });
  if (ok.some((x) => x === null)) return false;
  const [minute, hour, dom, month, week] = ok;
  // As in cron: when both day fields are restricted, either one may match.
  const dayOk = fields[2] !== "*" && fields[4] !== "*" ? dom || week : dom && week;
  return Boolean(minute && hour && month && dayOk);
}

/** The crons this file cannot read (they would never run locally). */
export function unsupportedCrons(crons: string[]): string[] {
  return crons.filter((c) => {
    const fields = c.trim().split(/\s+/);
    return fields.length !== 5 || fields.some((f, i) => fieldAllows(f, RANGES[i][0], RANGES[i]) === null);
  });
}

/** Runs the Worker's scheduled handler once for `cron` (and `at` as its scheduled time); throws with wrangler's answer when it fails. */
export async function triggerScheduled(origin: string, cron: string, at = new Date()): Promise<void> {
  const url = `${origin}/cdn-cgi/local/scheduled?cron=${encodeURIComponent(cron)}&time=${at.getTime()}`;
  const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  const text = (await res.text()).trim();
  if (!res.ok) throw new Error(`the scheduled handler for "${cron}" answered HTTP ${res.status}: ${text.slice(0, 200)}`);
}

/**
 * Runs every configured cron at the start of each minute it matches, until
 * the returned function is called. A failure is reported and the next minute
 * comes all the same. While `paused()` gives a reason (npm start restarting a
 * runtime that stopped answering), the minutes are skipped, and a request
 * that fails meanwhile is one of them: said once, not each minute.
 */
export function runCronsOnSchedule(origin: string, crons: string[], report: (line: string) => void, paused: () => string | null = () => null): () => void {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let skipping = false;
  const skip = (why: string) => {
    if (!skipping) report(`Cron Triggers are skipped while ${why}; they run again once it answers.`);
    skipping = true;
  };
  const next = () => {
    if (stopped) return;
    const now = Date.now();
    timer = setTimeout(tick, 60_000 - (now % 60_000) + 50);
    timer.unref();
  };
  const tick = () => {
    const at = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const why = paused();
    if (why) skip(why);
    else {
      skipping = false;
      for (const cron of crons.filter((c) => cronMatches(c, at))) {
        triggerScheduled(origin, cron, at).catch((e) => {
          const meanwhile = paused();
          if (meanwhile) skip(meanwhile);
          else report(`Cron "${cron}" at ${at.toISOString()}: ${(e as Error).message}`);
        });
      }
    }
    next();
  };
  next();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
