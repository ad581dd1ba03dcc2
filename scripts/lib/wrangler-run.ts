/**
 * Running the `wrangler` command the person would run themselves: the first
 * one on PATH, else the project's own (node_modules/.bin). Its output is
 * kept for parsing; a failure carries wrangler's own error lines.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { ROOT } from "./d1.ts";

/** The wrangler executable: PATH first, then node_modules/.bin. */
export function resolveWrangler(path = process.env.PATH ?? ""): string | null {
  for (const dir of [...path.split(delimiter).filter(Boolean), join(ROOT, "node_modules", ".bin")]) {
    const file = join(dir, "wrangler");
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return null;
}

export interface WranglerResult {
  stdout: string;
  stderr: string;
}

/** A wrangler command that exited non-zero (or could not start): its command line and its own error lines. */
export class WranglerError extends Error {
  readonly command: string;
  readonly detail: string;
  constructor(command: string, detail: string) {
    super(`${command} failed${detail ? `:\n${detail}` : ""}`);
    this.command = command;
    this.detail = detail;
  }
}

/**
 * What wrangler said about a failure: its `✘ [ERROR]` block (message and
 * notes), else its last lines; colours removed, log-file pointers left out.
 */
export function errorLines(output: string): string {
  const lines = stripVTControlCharacters(output)
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() && !/Logs were written to/.test(l));
  const at = lines.findIndex((l) => /\[ERROR\]/.test(l));
  return (at >= 0 ? lines.slice(at, at + 8) : lines.slice(-6)).join("\n");
}

export interface RunOptions {
  /** Written to wrangler's standard input (`secret put` reads the value there). */
  input?: string;
  /** Copy wrangler's output to this process's stderr as it comes (long steps: migrations, deploy). */
  echo?: boolean;
}

/** Runs `wrangler args…` without a terminal (so it never prompts); resolves with its output, or rejects with a WranglerError. */
export function runWrangler(wrangler: string, args: string[], o: RunOptions = {}): Promise<WranglerResult> {
  const command = `wrangler ${args.join(" ")}`;
  return new Promise((resolve, reject) => {
    // This Node first on PATH: wrangler's `#!/usr/bin/env node` must find Node 22.
    const env = { ...process.env, PATH: [dirname(process.execPath), process.env.PATH ?? ""].join(delimiter), WRANGLER_SEND_METRICS: "false" };
    const child = spawn(wrangler, args, { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (o.echo) process.stderr.write(d);
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (o.echo) process.stderr.write(d);
    });
    child.on("error", (e) => reject(new WranglerError(command, e.message)));
    child.on("close", (code, signal) => {
      if (code === 0) resolve({ stdout, stderr });
      else reject(new WranglerError(command, errorLines(`${stdout}\n${stderr}`) || `exit ${code ?? signal}`));
    });
    child.stdin.end(o.input ?? "");
  });
}

/** The first JSON value (object or array) in wrangler's output: some commands print a blank line or a banner first. */
export function jsonIn<T>(output: string): T {
  const text = stripVTControlCharacters(output);
  const at = text.search(/^\s*[[{]/m);
  const end = Math.max(text.lastIndexOf("}"), text.lastIndexOf("]"));
  if (at < 0 || end < at) throw new Error(`no JSON in wrangler's output: ${text.trim().slice(0, 200)}`);
  return JSON.parse(text.slice(at, end + 1)) as T;
}

/** The rows of a table wrangler prints (`queues list`): one object a row, keyed by the header. */
export function tableRows(output: string): Record<string, string>[] {
  const rows = stripVTControlCharacters(output)
    .split("\n")
    .filter((l) => l.trimStart().startsWith("│"))
    .map((l) => l.trim().slice(1, -1).split("│").map((cell) => cell.trim()));
  if (rows.length === 0) return [];
  const [head, ...body] = rows;
  return body.map((cells) => Object.fromEntries(head.map((h, i) => [h, cells[i] ?? ""])));
}
