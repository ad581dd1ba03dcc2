/**
 * `npm run -s audit`: the effect audit as a table. It runs the audit's vitest
 * file (test/effect-audit.test.ts: every tool observed through real MCP
 * clients against the Worker and a real local D1) with the JSON reporter, and
 * prints each tool's row from what the test left in its result: the declared
 * hints, the observed effects and the verdict. Exits 1 on any mismatch.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./lib/d1.ts";

interface Verdict {
  tool: string;
  hints: string;
  observed: string;
  calls: number;
  mismatches: string[];
}

interface Report {
  testResults: { assertionResults: { title: string; status: string; failureMessages: string[]; meta?: { audit?: Verdict } }[] }[];
}

const dir = mkdtempSync(join(tmpdir(), "taskgate-audit-"));
const out = join(dir, "report.json");
const vitest = join(ROOT, "node_modules", ".bin", "vitest");
const ran = spawnSync(vitest, ["run", "test/effect-audit.test.ts", "--reporter=json", `--outputFile=${out}`], { cwd: ROOT, encoding: "utf8" });
let report: Report;
try {
  report = JSON.parse(readFileSync(out, "utf8")) as Report;
} catch {
  process.stderr.write(ran.stdout + ran.stderr);
  console.error("effect audit: vitest wrote no report");
  process.exit(1);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const results = report.testResults.flatMap((f) => f.assertionResults);
const rows = results.flatMap((r) => (r.meta?.audit ? [r.meta.audit] : []));
const width = Math.max(...rows.map((r) => r.tool.length));
console.log(`${"tool".padEnd(width)}  hints  verdict   observed (first call; repeat)`);
for (const r of rows) {
  console.log(`${r.tool.padEnd(width)}  ${r.hints}  ${r.mismatches.length ? "MISMATCH" : "ok      "}  ${r.observed}`);
  for (const m of r.mismatches) console.log(`${" ".repeat(width)}  ! ${m}`);
}
// Anything else that failed (an unclassified column, a tool without a scenario, a scenario that broke).
const broken = results.filter((r) => r.status !== "passed" && !r.meta?.audit?.mismatches.length);
for (const b of broken) console.log(`FAILED ${b.title}: ${b.failureMessages.join(" ").split("\n")[0]}`);
const mismatches = rows.reduce((n, r) => n + r.mismatches.length, 0) + broken.length;
console.log(`hints: R read / W write, D destructive, I idempotent, O open world, H human only`);
console.log(`effect audit: ${rows.length} tools, ${rows.reduce((n, r) => n + r.calls, 0)} calls, ${mismatches} mismatches`);
process.exit(mismatches || ran.status ? 1 : 0);
