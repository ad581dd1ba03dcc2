import { invalid } from "../domain/errors.ts";

/**
 * Opaque keyset cursors: the sort key and id of the last row of a page,
 * base64url JSON. A cursor only moves a query forward; it carries no authority
 * (every query still filters by the caller's account).
 */
export interface CursorKey {
  k: string | number | null;
  id: string;
}

export function encodeCursor(key: CursorKey): string {
  return btoa(JSON.stringify(key)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor(cursor: string | undefined): CursorKey | null {
  if (!cursor) return null;
  try {
    const json = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const key = JSON.parse(json) as CursorKey;
    if (typeof key !== "object" || key === null || typeof key.id !== "string") throw new Error("shape");
    return key;
  } catch {
    throw invalid("cursor: not a cursor this server issued. Pass next_cursor from the previous page unchanged, or omit it for the first page.");
  }
}

/** Rows fetched with limit + 1: the page, and the cursor to the next one if there is more. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => CursorKey): { items: T[]; next_cursor: string | null } {
  if (rows.length <= limit) return { items: rows, next_cursor: null };
  const items = rows.slice(0, limit);
  return { items, next_cursor: encodeCursor(keyOf(items[items.length - 1])) };
}
