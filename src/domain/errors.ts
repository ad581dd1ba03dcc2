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
  constructor(code: ToolErrorCode, message: string) {
    super(message);
    this.name = "ToolError";
    this.code = code;
  }
}

export const notFound = (what: string, id: string, hint: string): ToolError =>
  new ToolError("not_found", `No ${what} ${id} in this account; ${hint}.`);

export const invalid = (message: string): ToolError => new ToolError("invalid_argument", message);

export const conflict = (message: string): ToolError => new ToolError("conflict", message);

export const forbidden = (message: string): ToolError => new ToolError("forbidden", message);
