import type { z } from "zod";

/**
 * Argument errors that read alike for every mistake: the field, what is wrong
 * with it, and what to send instead, in the words of the tool's own JSON
 * Schema (its detailed form: tools/list announces the same fields in fewer
 * words), never a raw dump of validator issues.
 */

type JsonSchema = Record<string, any>;

const CLOSING = "(tools/list has the input schema).";

/** A nullable field's schema without its null branch; the field's description (on the union) stays with it. */
function nonNull(s: JsonSchema | undefined): JsonSchema | undefined {
  if (!s?.anyOf) return s;
  const branch = (s.anyOf as JsonSchema[]).find((x) => x.type !== "null");
  if (!branch) return s;
  return branch.description === undefined && s.description !== undefined ? { ...branch, description: s.description } : branch;
}

/** The schema of the field at `path` (object keys and array indexes), if the schema has one. */
function schemaAt(root: JsonSchema, path: PropertyKey[]): JsonSchema | undefined {
  let node: JsonSchema | undefined = root;
  for (const key of path) {
    node = nonNull(node);
    if (!node) return undefined;
    node = typeof key === "number" ? node.items : node.properties?.[key as string];
  }
  return nonNull(node);
}

function valueAt(value: unknown, path: PropertyKey[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** What a value of this schema is, in a few words: "a string", "one of low, normal, high", "a list of strings". */
function kindOf(s: JsonSchema | undefined): string {
  if (!s) return "a value";
  if (s.enum) return `one of ${(s.enum as unknown[]).map(String).join(", ")}`;
  if (s.const !== undefined) return JSON.stringify(s.const);
  switch (s.type) {
    case "string":
      return s.format === "date-time" ? "an ISO 8601 time with a zone" : s.format === "date" ? "a date, YYYY-MM-DD" : "a string";
    case "integer":
      return "a whole number";
    case "number":
      return "a number";
    case "boolean":
      return "true or false";
    case "array":
      return s.items?.type === "object" ? "a list of objects" : `a list of ${kindOf(s.items).replace(/^an? /, "")}s`;
    case "object":
      return "an object";
    default:
      return "a value";
  }
}

function what(s: JsonSchema | undefined): string {
  const description = typeof s?.description === "string" ? ` (${s.description})` : "";
  return `${kindOf(s)}${description}`;
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Whether the field at `path` must be given (an item of a list always is). */
function requiredAt(root: JsonSchema, path: PropertyKey[]): boolean {
  const key = path[path.length - 1];
  if (typeof key === "number") return true;
  const parent = path.length === 1 ? root : schemaAt(root, path.slice(0, -1));
  return ((parent?.required ?? []) as string[]).includes(key as string);
}

/** Zod issues as one message that names each field, says what is wrong, and what to send. */
export function describeIssues(tool: string, error: z.ZodError, rawArgs: unknown, input: JsonSchema): string {
  const lines = error.issues.slice(0, 10).map((issue) => {
    const field = issue.path.length ? issue.path.map(String).join(".") : "(arguments)";
    const named = issue.path.length > 0 && issue.code !== "unrecognized_keys";
    const value = named ? valueAt(rawArgs, issue.path) : undefined;
    if (named && value === undefined) return `${field}: required; send ${what(schemaAt(input, issue.path))}`;
    // Only a field whose description says what null does takes it; elsewhere leaving the field out is how to say "none".
    if (named && value === null) return `${field}: must not be null; ${requiredAt(input, issue.path) ? "send" : "leave it out, or send"} ${what(schemaAt(input, issue.path))}`;
    return `${field}: ${issue.message}`;
  });
  return `Invalid arguments for ${tool}. ${lines.join("; ")}. Fix ${lines.length === 1 ? "this field" : "these fields"} and call again ${CLOSING}`;
}

/**
 * Fields of many lines (a note, a comment's body, a description, a question,
 * a reason, an answer in words, a step's text, a run's message or summary),
 * where newlines and tabs are text; every other text field is one line.
 */
export const MULTILINE_FIELDS = new Set(["answer", "body", "content", "description", "message", "note", "notes", "question", "reason", "steps", "summary", "text"]);

/** C0 and C1 control characters and DEL; `lines` lets tab, newline and carriage return through. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const CONTROL_IN_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;

const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * Control characters (NUL and the like) in any text of the arguments, each
 * field named, before anything else is checked: no tool stores one. Newlines
 * and tabs are text in the fields of MULTILINE_FIELDS. Null when there are none.
 */
export function controlCharacters(tool: string, rawArgs: unknown): string | null {
  const lines: string[] = [];
  const visit = (v: unknown, path: string[], name: string) => {
    if (lines.length >= 10) return;
    if (typeof v === "string") {
      const multiline = MULTILINE_FIELDS.has(name);
      const m = (multiline ? CONTROL_IN_LINES : CONTROL).exec(v);
      if (m) {
        const allowed = multiline ? " (newlines and tabs are fine)" : " (it is one line of text: no newlines or tabs)";
        lines.push(`${path.join(".") || "(arguments)"}: must not contain control characters, found ${codePoint(m[0])} at character ${m.index + 1}; remove it${allowed}`);
      }
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => visit(x, [...path, String(i)], name));
    } else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) visit(x, [...path, k], k);
    }
  };
  visit(rawArgs, [], "");
  if (lines.length === 0) return null;
  return `Invalid arguments for ${tool}. ${lines.join("; ")}. Fix ${lines.length === 1 ? "this field" : "these fields"} and call again ${CLOSING}`;
}

/** `arguments` that are not an object (an array, a string, a number). */
export function argumentsNotObject(tool: string, rawArgs: unknown, input: JsonSchema): string {
  const required = (input.required ?? []) as string[];
  const example = required.length
    ? `{${required.map((name) => `"${name}": ${kindOf(schemaAt(input, [name]))}`).join(", ")}}`
    : "{} (every field of this tool is optional)";
  const needs = required.length ? ` ${tool} requires ${required.join(", ")}.` : "";
  return `Invalid arguments for ${tool}. arguments: must be an object of named fields, got ${jsonType(rawArgs)}. Send e.g. ${example}.${needs} Fix this and call again ${CLOSING}`;
}
