/**
 * A task's scope: the areas it works in, each a path or glob (`src/db/**`,
 * `docs/deploy.md`) or a plain name (`billing`). While a task is held, another
 * agent's claim of a task whose scope overlaps is refused (docs/approvals-and-claims.md,
 * "Scopes"). The overlap rule is stated once here, in JS (overlaps) and in SQL
 * (overlapSql of src/db/scopes-sql.ts, which the claim batches run); test/scopes.test.ts holds them
 * to the same answers.
 *
 * - A **name** is a word of letters, digits, `-` and `_` (no `/`, `.` or `*`);
 *   names overlap when equal, ignoring case. A name never overlaps a path.
 * - A **path** is anything else without a wildcard: it overlaps itself and
 *   what lies under it (`src/db` overlaps `src/db/tasks.ts`, `src/db/**`).
 * - A **glob** has `*` (within a folder) or `**` (any depth). A path overlaps a
 *   glob it matches (`docs/a.md` overlaps `docs/**` and `docs/*.md`, not
 *   `docs/*.txt` or `*.md`); two globs overlap when the part of one before
 *   its first wildcard starts the other's (`src/db/**` and `src/**`), which
 *   may report an overlap that no file shares (`docs/*.md`, `docs/*.txt`),
 *   never miss one. In a glob with `**`, each `*` may cross folders too.
 *
 * Paths are compared as written (case matters); `./` and a leading `/` are
 * dropped, `//` is one `/`, and a trailing `/` means the whole folder (`src/`
 * is `src/**`).
 */

/** At most this many areas a task. */
export const SCOPE_MAX_AREAS = 20;
/** At most this many characters an area. */
export const SCOPE_MAX_LENGTH = 200;

/** An area as stored: as given (normalized), its kind, its literal part, its GLOB pattern and folder depth. */
export interface Area {
  /** The area, normalized. */
  a: string;
  /** n: a name, p: a path, g: a glob. */
  k: "n" | "p" | "g";
  /** A name lowercased; a path; a glob's part before its first wildcard. */
  p: string;
  /** A glob as SQLite's GLOB reads it (`**` as `*`); empty otherwise. */
  g: string;
  /** The `/` count a path or a glob without `**` must match; -1: any (a glob with `**`). */
  s: number;
}

const NAME = /^[A-Za-z0-9_-]+$/;
const slashes = (x: string) => x.split("/").length - 1;

/** Why the area is refused, or null. */
export function areaProblem(raw: string): string | null {
  const x = raw.trim();
  if (!x) return "must not be empty";
  if (x.length > SCOPE_MAX_LENGTH) return `must be at most ${SCOPE_MAX_LENGTH} characters`;
  if (x.includes("..")) return "must not contain `..`";
  if (/[\u0000-\u001f\u007f]/.test(raw)) return "must not contain control characters or line breaks";
  if (/[?[\]{}\\]/.test(x)) return "may use `*` and `**` as wildcards, but not `?`, brackets, braces or backslashes";
  if (/\*\*\*/.test(x)) return "has `***`; use `*` (within a folder) or `**` (any depth)";
  return null;
}

/** The area as stored (areaProblem first). */
export function toArea(raw: string): Area {
  let x = raw.trim();
  if (NAME.test(x)) return { a: x.toLowerCase(), k: "n", p: x.toLowerCase(), g: "", s: 0 };
  x = x.replace(/\/{2,}/g, "/");
  while (x.startsWith("./")) x = x.slice(2);
  x = x.replace(/^\/+/, "");
  if (x.endsWith("/")) x += "**";
  const star = x.indexOf("*");
  if (star < 0) return { a: x, k: "p", p: x, g: "", s: slashes(x) };
  const deep = x.includes("**");
  const g = deep ? x.replace(/\/\*\*\//g, "*").replace(/\*\*/g, "*") : x;
  return { a: x, k: "g", p: x.slice(0, star), g, s: deep ? -1 : slashes(x) };
}

/**
 * The scope argument as stored: normalized, duplicates dropped, or the first
 * problem (`scope.2: …`). An empty list clears the scope.
 */
export function parseScope(raw: string[]): { areas: Area[] } | { problem: string } {
  if (raw.length > SCOPE_MAX_AREAS) return { problem: `scope: at most ${SCOPE_MAX_AREAS} areas (got ${raw.length})` };
  const areas: Area[] = [];
  for (const [i, r] of raw.entries()) {
    const problem = areaProblem(r);
    if (problem) return { problem: `scope.${i}: ${problem} (got ${JSON.stringify(r.slice(0, 60))})` };
    const area = toArea(r);
    if (area.a === "" || area.a === "**") return { problem: `scope.${i}: names no area; give a folder, a file, a glob or a name` };
    if (!areas.some((x) => x.a === area.a && x.k === area.k)) areas.push(area);
  }
  return { areas };
}

/** The column's value for these areas (null: none). */
export const scopeColumn = (areas: Area[]): string | null => (areas.length ? JSON.stringify(areas) : null);

/** The areas a stored scope holds. */
export function scopeAreas(column: string | null): Area[] {
  return column ? (JSON.parse(column) as Area[]) : [];
}

/** What the tools show: the areas as normalized. */
export const scopeShown = (column: string | null): string[] => scopeAreas(column).map((x) => x.a);

/** SQLite's GLOB for patterns of `*` only (the areas admit no other wildcard). */
function glob(pattern: string, x: string): boolean {
  const re = new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+^${}()|[\]\\?]/g, "\\$&")).join("[\\s\\S]*")}$`);
  return re.test(x);
}

const under = (x: string, folder: string) => x === folder || x.startsWith(`${folder}/`);

/** A path against another area (not a name). */
function pathOverlaps(x: Area, y: Area): boolean {
  if (under(y.p, x.p)) return true;
  if (y.k === "p") return under(x.p, y.p);
  return x.p.startsWith(y.p) && glob(y.g, x.p) && (y.s < 0 || x.s === y.s);
}

/** Whether two areas overlap (the rule above). */
export function overlaps(x: Area, y: Area): boolean {
  if (x.k === "n" || y.k === "n") return x.k === y.k && x.p === y.p;
  if (x.k === "p") return pathOverlaps(x, y);
  if (y.k === "p") return pathOverlaps(y, x);
  return x.p.startsWith(y.p) || y.p.startsWith(x.p);
}

/** The areas of `mine` that overlap some area of `theirs`, as shown. */
export function overlapping(mine: Area[], theirs: Area[]): string[] {
  return mine.filter((x) => theirs.some((y) => overlaps(x, y))).map((x) => x.a);
}

/** The overlaps with tasks others hold, in words: each task, its holder and the areas (ours, then theirs). */
export function overlapWords(holders: { id: string; title: string; holder: string; theirs: string; mine: string }[]): string {
  return holders
    .map((h) => {
      const mine = scopeAreas(h.mine);
      const theirs = scopeAreas(h.theirs);
      return `task ${h.id} ("${h.title.slice(0, 80)}", held by ${h.holder}): ${overlapping(mine, theirs).join(", ")} overlaps ${overlapping(theirs, mine).join(", ")}`;
    })
    .join("; ");
}
