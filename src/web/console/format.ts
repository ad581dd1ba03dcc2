/** Small, pure helpers the console pages share: times in the account's zone, shortened texts, labels. */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-GB", { timeZone, year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
    } catch {
      f = new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
    }
    if (formatters.size > 50) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** "20 Nov 2026, 14:03" in the account's time zone. */
export function absolute(iso: string, timeZone: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : formatter(timeZone).format(ms);
}

/** "just now", "5 min ago", "3 h ago", "in 2 days", falling back to the date after a week. */
export function relative(iso: string, nowMs: number, timeZone: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const diff = ms - nowMs;
  const abs = Math.abs(diff);
  const say = (n: number, unit: string) => (diff < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`);
  if (abs < 60_000) return diff < 0 ? "just now" : "in a moment";
  if (abs < 3_600_000) return say(Math.round(abs / 60_000), "min");
  if (abs < 86_400_000) return say(Math.round(abs / 3_600_000), "h");
  if (abs < 7 * 86_400_000) {
    const d = Math.round(abs / 86_400_000);
    return say(d, d === 1 ? "day" : "days");
  }
  return absolute(iso, timeZone);
}

/** The text cut to `max` characters with an ellipsis, and whether it was cut. */
export function clip(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  return { text: text.slice(0, max).trimEnd() + "…", cut: true };
}

const STATUS_WORDS: Record<string, string> = {
  open: "open",
  in_progress: "in progress",
  blocked: "blocked",
  awaiting_approval: "awaiting approval",
  done: "done",
  cancelled: "cancelled",
  running: "running",
  succeeded: "succeeded",
  failed: "failed",
  pending: "pending",
  skipped: "skipped",
  not_connected: "not connected",
  auth_failed: "sign-in failed",
};

export function statusWord(status: string): string {
  return STATUS_WORDS[status] ?? status.replaceAll("_", " ");
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Who did it, for a person reading: the person is "you". */
export function actorWord(actor: string): string {
  return actor === "human" ? "you" : actor;
}

/**
 * Who did it, where the record names the person: an agent by its name, a person
 * by their shown name ("(you)" after the reader's own), and a person the record
 * does not name (a tg_ token of no person, a row from before people were named) as "a person".
 */
export function personWord(actor: string, personId: string | null | undefined, personName: string | null | undefined, readerId: string): string {
  if (actor !== "human") return actor;
  if (!personId) return "a person";
  const name = personName || "a person";
  return personId === readerId ? `${name} (you)` : name;
}

const FREQ_WORDS: Record<string, [string, string]> = { DAILY: ["day", "days"], WEEKLY: ["week", "weeks"], MONTHLY: ["month", "months"], YEARLY: ["year", "years"] };
const DAY_WORDS: Record<string, string> = { MO: "Monday", TU: "Tuesday", WE: "Wednesday", TH: "Thursday", FR: "Friday", SA: "Saturday", SU: "Sunday" };

/** A canonical repeat rule in words: FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;COUNT=5 → "every 2 weeks on Monday, Thursday, 5 times in all". */
export function ruleWords(rule: string): string {
  const parts = new Map(rule.split(";").map((p) => p.split("=") as [string, string]));
  const unit = FREQ_WORDS[parts.get("FREQ") ?? ""];
  if (!unit) return rule;
  const n = Number(parts.get("INTERVAL") ?? "1");
  const words = [n === 1 ? `every ${unit[0]}` : `every ${n} ${unit[1]}`];
  const days = parts.get("BYDAY");
  if (days) words.push(`on ${days.split(",").map((d) => d.replace(/[A-Z]{2}$/, (w) => DAY_WORDS[w] ?? w)).join(", ")}`);
  const monthDays = parts.get("BYMONTHDAY");
  if (monthDays) words.push(`on day ${monthDays.split(",").join(", ")} of the month`);
  const count = parts.get("COUNT");
  if (count) words.push(`${count} times in all`);
  const until = parts.get("UNTIL");
  if (until) words.push(`until ${until.replace(/^(\d{4})(\d{2})(\d{2}).*$/, "$1-$2-$3")}`);
  return words.join(", ").replace(", on", " on");
}
