/**
 * Mistakes a caller can fix. The registry turns each into an `isError` tool
 * result whose text says what went wrong and how to recover; anything else a
 * handler throws is a bug or an infrastructure fault, logged and answered with
 * a generic message.
 */
export type ToolErrorCode =
  | "not_found"
  | "invalid_argument"
  | "conflict"
  | "forbidden"
  | "upstream"
  | "not_connected"
  | "rate_limited";

export class ToolError extends Error {
  readonly code: ToolErrorCode;
  /** What a not_found names (its kind and id), so the registry can say when it is in the trash. */
  readonly subject?: { kind: string; id: string };
  constructor(code: ToolErrorCode, message: string, subject?: { kind: string; id: string }) {
    super(message);
    this.name = "ToolError";
    this.code = code;
    this.subject = subject;
  }
}

export const notFound = (what: string, id: string, hint: string): ToolError =>
  new ToolError("not_found", `No ${what} ${id} in this account; ${hint}.`, { kind: what, id });

/** A record that is not live because it (or the unit it belongs to) is in the trash: where, and how to bring it back. */
export function inTrash(kind: string, id: string, t: { trash_id: string; target_kind: string; target_id: string; title: string; purge_after: string }): ToolError {
  const unit = t.target_id === id ? ` ("${t.title}")` : ` with its ${t.target_kind} ${t.target_id} ("${t.title}")`;
  return new ToolError(
    "not_found",
    `${kind[0].toUpperCase()}${kind.slice(1)} ${id} is in the trash${unit} (item ${t.trash_id}, purged after ${t.purge_after}). ` +
      `restore_from_trash with item_id ${t.trash_id} brings it back; then call again.`,
  );
}

export const invalid = (message: string): ToolError => new ToolError("invalid_argument", message);

export const conflict = (message: string): ToolError => new ToolError("conflict", message);

export const forbidden = (message: string): ToolError => new ToolError("forbidden", message);
