import { invalid } from "./errors.ts";

/**
 * The words of the full-text index, kept apart per account. Every indexed
 * word is written as `<account key>_<word>` (the index treats `_` as part of a
 * word), so an account's words are terms of their own: a search reads only its
 * own account's postings, however many accounts share the database, and ranks
 * by its own account's word counts.
 */

const MAX_TERMS = 16;

/**
 * The account's key in indexed words: 8 characters of its id (the random part
 * of a generated id). The schema's rebuild computes the same: substr(account_id, 5, 8).
 * Two accounts with the same key would only share postings; every search still filters by account.
 */
export function accountKey(accountId: string): string {
  return accountId.slice(4, 12);
}

/** The words of a text: runs of letters, digits and marks, after NFKC. */
export function wordsOf(text: string): string[] {
  return text
    .normalize("NFKC")
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .filter((w) => w.length > 0);
}

/** A text as the index stores it for the account: each word behind the account key. */
export function indexText(accountId: string, text: string): string {
  const key = accountKey(accountId);
  return wordsOf(text).map((w) => `${key}_${w}`).join(" ");
}

/** The words a search looks for (at most 16); refuses a query without one. */
export function searchWords(text: string): string[] {
  const words = wordsOf(text).slice(0, MAX_TERMS);
  if (words.length === 0) throw invalid("query: give at least one word or number to search for.");
  return words;
}

/**
 * Search words as a safe FTS5 query over the account's terms: each word a
 * quoted string (quotes doubled), the last one a prefix, all of them required.
 * Only letters and digits make a word, so FTS syntax in the text (AND, NEAR, *,
 * ^, :, -, parens) is searched for as plain words or ignored, never interpreted.
 */
export function toFtsQuery(accountId: string, words: readonly string[]): string {
  const key = accountKey(accountId);
  return words.map((w, i) => `"${key}_${w.replace(/"/g, '""')}"${i === words.length - 1 ? "*" : ""}`).join(" ");
}

/** A word as the index compares it: without case or accents. */
export function fold(word: string): string {
  return word.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

interface Token {
  start: number;
  end: number;
  hit: boolean;
}

function tokensOf(text: string, words: readonly string[]): Token[] {
  const wanted = words.map(fold);
  const last = wanted.length - 1;
  const out: Token[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const w = fold(m[0].normalize("NFKC"));
    const hit = wanted.some((q, i) => (i === last ? w.startsWith(q) : w === q));
    out.push({ start: m.index, end: m.index + m[0].length, hit });
  }
  return out;
}

/** Whether the text holds one of the search words (the last as a prefix). */
export function mentions(text: string, words: readonly string[]): boolean {
  return tokensOf(text, words).some((t) => t.hit);
}

/**
 * At most `size` words of the text around its densest run of search words,
 * each found word between `mark`s, with `…` where the text goes on.
 */
export function snippetOf(text: string, words: readonly string[], mark = "**", size = 12): string {
  const tokens = tokensOf(text, words);
  if (tokens.length === 0) return "";
  let best = 0;
  let bestHits = -1;
  for (let i = 0; i < Math.max(1, tokens.length - size + 1); i++) {
    const hits = tokens.slice(i, i + size).filter((t) => t.hit).length;
    if (hits > bestHits) (best = i), (bestHits = hits);
  }
  const shown = tokens.slice(best, best + size);
  let out = best > 0 ? "…" : "";
  let at = best > 0 ? shown[0].start : 0;
  for (const t of shown) {
    out += text.slice(at, t.start) + (t.hit ? `${mark}${text.slice(t.start, t.end)}${mark}` : text.slice(t.start, t.end));
    at = t.end;
  }
  return best + size < tokens.length ? `${out}…` : out + text.slice(at);
}

export const SEARCH_FIELDS = ["title", "notes", "comments"] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

/**
 * Where a match holds the search words (a task's title and notes, and the best
 * matching comment when one holds them all), and a snippet of the first such field.
 */
export function searchHit(
  row: { title: string; notes: string; comment_body: string | null },
  words: readonly string[],
  mark = "**",
): { matched_in: SearchField[]; snippet: string } {
  const text: Record<SearchField, string> = { title: row.title, notes: row.notes, comments: row.comment_body ?? "" };
  const matched = SEARCH_FIELDS.filter((f) => (f === "comments" ? row.comment_body !== null : mentions(text[f], words)));
  const first = matched[0] ?? "title";
  return { matched_in: matched, snippet: snippetOf(text[first], words, mark) };
}
