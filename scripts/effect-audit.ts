/**
 * `npm run -s audit`: the effect audit as a table, then the consent audit.
 *
 * It runs the audits' vitest files (test/effect-audit.test.ts: every tool
 * observed through real MCP clients against the Worker and a real local D1;
 * test/consent-audit-*.test.ts: every write tool × every route to a held
 * task × every situation × every caller, judged by rows) with the JSON
 * reporter, and prints what the tests left in their results: each tool's
 * declared hints, observed effects and verdict; then each consent breach, and
 * the consent audit's summary line. Exits 1 on any mismatch or breach.
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

interface ConsentVerdict {
  tool: string;
  state: string;
  routes: number;
  calls: number;
  breaches: string[];
}

interface PolicyVerdict {
  tool: string;
  era: string;
  calls: number;
  breaches: string[];
}

interface Assertion {
  title: string;
  status: string;
  failureMessages: string[];
  meta?: { audit?: Verdict; consent?: ConsentVerdict; policy?: PolicyVerdict; outputs?: { validated: number; failed: number } };
}

interface Report {
  testResults: { assertionResults: Assertion[] }[];
}

const dir = mkdtempSync(join(tmpdir(), "taskgate-audit-"));
const out = join(dir, "report.json");
const vitest = join(ROOT, "node_modules", ".bin", "vitest");
const files = [
  "test/effect-audit.test.ts", "test/consent-audit-held.test.ts", "test/consent-audit-decided.test.ts",
  "test/consent-audit-policy-modern.test.ts", "test/consent-audit-policy-legacy.test.ts",
];
const ran = spawnSync(vitest, ["run", ...files, "--reporter=json", `--outputFile=${out}`], { cwd: ROOT, encoding: "utf8" });
let report: Report;
try {
  report = JSON.parse(readFileSync(out, "utf8")) as Report;
} catch {
  process.stderr.write(ran.stdout + ran.stderr);
  console.error("audit: vitest wrote no report");
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
const consent = results.flatMap((r) => (r.meta?.consent ? [r.meta.consent] : []));
// Anything else that failed (an unclassified column, a tool without a scenario, a published set that disagrees, a scenario that broke).
const broken = results.filter((r) => r.status !== "passed" && !r.meta?.audit?.mismatches.length && !r.meta?.consent?.breaches.length && !r.meta?.policy?.breaches.length);
for (const b of broken) console.log(`FAILED ${b.title}: ${b.failureMessages.join(" ").split("\n")[0]}`);
const mismatches = rows.reduce((n, r) => n + r.mismatches.length, 0);
console.log(`hints: R read / W write, D destructive, I idempotent, O open world, H human only`);
console.log(`effect audit: ${rows.length} tools, ${rows.reduce((n, r) => n + r.calls, 0)} calls, ${mismatches} mismatches`);

for (const v of consent) for (const b of v.breaches) console.log(`BREACH ${v.state} ${v.tool}: ${b}`);
const breaches = consent.reduce((n, v) => n + v.breaches.length, 0);
const tools = new Set(consent.map((v) => v.tool)).size;
const situations = new Set(consent.map((v) => v.state)).size;
const calls = consent.reduce((n, v) => n + v.calls, 0);
console.log(`consent audit: ${tools} tools × ${situations} situations, ${calls} calls, ${breaches} breaches`);
const policy = results.flatMap((r) => (r.meta?.policy ? [r.meta.policy] : []));
for (const v of policy) for (const b of v.breaches) console.log(`BREACH policy (${v.era}) ${v.tool}: ${b}`);
const policyBreaches = policy.reduce((n, v) => n + v.breaches.length, 0);
const eras = [...new Set(policy.map((v) => v.era))];
console.log(
  `consent audit, policy situations: ${new Set(policy.map((v) => v.tool)).size} write tools × allow, ask, deny × ${eras.length} eras (${eras.join(", ")}), ` +
    `${policy.reduce((n, v) => n + v.calls, 0)} calls, ${policyBreaches} breaches`,
);
const outputs = results.flatMap((r) => (r.meta?.outputs ? [r.meta.outputs] : []));
const validated = outputs.reduce((n, o) => n + o.validated, 0);
const failed = outputs.reduce((n, o) => n + o.failed, 0);
console.log(`output schemas: ${validated} structured results of the audits' calls validated (Ajv, draft 2020-12, strict), ${failed} failures`);
process.exit(failed || mismatches || breaches || policyBreaches || broken.length || ran.status ? 1 : 0);
