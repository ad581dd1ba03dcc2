/**
 * What a process left running: its descendants, read from /proc (Linux). The
 * browser tests and the end-to-end script use it to prove that stopping the
 * stack left no workerd, wrangler or Chromium behind.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The command line, arguments joined by spaces. */
  command: string;
}

function read(pid: number): ProcessInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The name in parentheses may hold spaces and parentheses; the fields after the last ")" are fixed.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return null; // a zombie is already dead, only not yet reaped
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    return { pid, ppid: Number(fields[1]), command };
  } catch {
    return null; // gone meanwhile, or not readable
  }
}

/** Whether /proc can be read here (false on macOS and Windows: the checks then say nothing). */
export function canListProcesses(): boolean {
  try {
    readdirSync("/proc/self");
    return true;
  } catch {
    return false;
  }
}

/** Every living process below `root` (children, their children, …). */
export function descendants(root: number = process.pid): ProcessInfo[] {
  if (!canListProcesses()) return [];
  const all = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => read(Number(name)))
    .filter((p): p is ProcessInfo => p !== null);
  const below: ProcessInfo[] = [];
  const parents = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        below.push(p);
        grew = true;
      }
    }
  }
  return below;
}

/** Whether any process of the group `pgid` still lives. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Waits until `check()` is empty or `timeoutMs` passes; returns what is still there. */
export async function settle<T>(check: () => T[], timeoutMs = 5000): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  let left = check();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = check();
  }
  return left;
}

/** Whether a process with this pid is alive (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
