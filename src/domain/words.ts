/** A list in words for a sentence a person reads: "a", "a and b", "a, b and c" (or "a, b or c"). */
export function inWords(items: readonly string[], last: "and" | "or" = "and"): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} ${last} ${items[items.length - 1]}`;
}
