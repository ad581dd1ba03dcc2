/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * pinned) run against the local server, once with each token given: every
 * server scenario the suite has, each with a real token that
 * conformance-auth.ts adds to the suite's requests (the suite has no token
 * option), and nothing reachable but the local server. SCENARIOS is the
 * reviewed verdict on each scenario: the ones that apply to any MCP server
 * must pass (except the checks named in `pending`, printed, not failed); the
 * others are fixtures of the suite's reference server that Taskgate does not
 * have, and must fail only for the reason written beside them. A scenario the
 * suite gains or drops fails the run until it is reviewed here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./d1.ts";
import { REFUSED_MARK } from "./conformance-auth.ts";
import { assert, run, type Checks } from "./e2e-harness.ts";

const SUITE_JS = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const PRELOAD = pathToFileURL(join(ROOT, "scripts", "lib", "conformance-auth.ts")).href;
const SUITE_TIMEOUT_MS = 60_000;

type Verdict =
  /** Holds for any MCP server: every check passes, but those in `pending` (check id → why it fails for now, and its message). */
  | { applies: true; pending?: Record<string, { why: string; fails: RegExp }> }
  /** Tests something Taskgate does not offer; every failing check's message matches `fails`. */
  | { applies: false; why: string; fails: RegExp };

const FIXTURE_TOOL = /Unknown tool: test_|Tool 'json_schema_2020_12_tool' not found/;
const NO_METHOD = /Method not found/;
const fixtureTool = (what: string): Verdict => ({ applies: false, why: `calls the reference server's ${what}; Taskgate's tools are its own catalog`, fails: FIXTURE_TOOL });
const noCapability = (what: string): Verdict => ({ applies: false, why: `calls ${what}; Taskgate declares no such capability, so the method is not found, as the spec allows`, fails: NO_METHOD });
const FIXTURE_RESOURCE = /Unknown resource: test:\/\//;
const fixtureResource = (what: string): Verdict => ({
  applies: false,
  why: `reads the reference server's ${what}; Taskgate's one resource is its approvals view (ui://taskgate/approvals), so the read names an unknown resource`,
  fails: FIXTURE_RESOURCE,
});
const stateless = (what: string): Verdict => ({
  applies: false,
  why: `${what} over a session's resumable SSE stream (test_reconnection); Taskgate is stateless (no Mcp-Session-Id), so the suite only warns`,
  fails: FIXTURE_TOOL,
});

/** Every server scenario of the pinned suite (`conformance list --server`), with the verdict on it. */
export const SCENARIOS: Record<string, Verdict> = {
  "server-initialize": { applies: true },
  ping: { applies: true },
  "tools-list": { applies: true },
  "dns-rebinding-protection": { applies: true },
  "logging-set-level": noCapability("logging/setLevel"),
  "completion-complete": noCapability("completion/complete on the reference server's prompts"),
  "tools-call-simple-text": fixtureTool("test_simple_text tool"),
  "tools-call-image": fixtureTool("test_image_content tool"),
  "tools-call-audio": fixtureTool("test_audio_content tool"),
  "tools-call-embedded-resource": fixtureTool("test_embedded_resource tool"),
  "tools-call-mixed-content": fixtureTool("test_multiple_content_types tool"),
  "tools-call-with-logging": noCapability("logging/setLevel, then the reference server's test_tool_with_logging tool"),
  "tools-call-error": fixtureTool("test_error_handling tool"),
  "tools-call-with-progress": fixtureTool("test_tool_with_progress tool"),
  "tools-call-sampling": fixtureTool("test_sampling tool (a server-to-client sampling request)"),
  "tools-call-elicitation": fixtureTool("test_elicitation tool"),
  "json-schema-2020-12": fixtureTool("json_schema_2020_12_tool"),
  "elicitation-sep1034-defaults": fixtureTool("test_elicitation_sep1034_defaults tool"),
  "elicitation-sep1330-enums": fixtureTool("test_elicitation_sep1330_enums tool"),
  "server-sse-polling": stateless("stream polling (SEP-1699)"),
  "server-sse-multiple-streams": stateless("several concurrent streams"),
  "resources-list": { applies: true },
  "resources-read-text": fixtureResource("test://static-text"),
  "resources-read-binary": fixtureResource("test://static-binary"),
  "resources-templates-read": fixtureResource("resource template (test://template/{id}/data)"),
  "resources-subscribe": noCapability("resources/subscribe"),
  "resources-unsubscribe": noCapability("resources/unsubscribe"),
  "prompts-list": noCapability("prompts/list of the reference server's prompts"),
  "prompts-get-simple": noCapability("prompts/get of test_simple_prompt"),
  "prompts-get-with-args": noCapability("prompts/get of test_prompt_with_arguments"),
  "prompts-get-embedded-resource": noCapability("prompts/get of test_prompt_with_embedded_resource"),
  "prompts-get-with-image": noCapability("prompts/get of test_prompt_with_image"),
};

interface SuiteCheck {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
  details?: Record<string, unknown>;
}

/** The suite's results directory: one `server-<scenario>-<timestamp>/checks.json` a scenario. */
function readResults(dir: string): Map<string, SuiteCheck[]> {
  const results = new Map<string, SuiteCheck[]>();
  for (const entry of readdirSync(dir)) {
    const name = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
    assert(name, `an unexpected entry in the suite's results: ${entry}`);
    results.set(name, JSON.parse(readFileSync(join(dir, entry, "checks.json"), "utf8")) as SuiteCheck[]);
  }
  return results;
}

const count = (list: SuiteCheck[], status: string) => list.filter((c) => c.status === status).length;
const failures = (list: SuiteCheck[]) => list.filter((c) => c.status === "FAILURE");
const describe = (c: SuiteCheck) => `${c.id}: ${(c.errorMessage ?? "failed").split("\n")[0].slice(0, 200)}`;

/** One run of the whole suite with one token; the checks of each scenario it ran. */
async function runSuite(base: string, token: string, outDir: string): Promise<Map<string, SuiteCheck[]>> {
  const args = ["--no-warnings", "--import", PRELOAD, SUITE_JS, "server", "--url", `${base}/mcp`, "--suite", "all", "-o", outDir];
  // The suite exits 1 when any scenario fails; the verdicts below decide.
  const { stderr } = await run(process.execPath, args, SUITE_TIMEOUT_MS, { env: { CONFORMANCE_ORIGIN: base, CONFORMANCE_TOKEN: token }, exitCodes: [0, 1] });
  const refused = stderr.split("\n").filter((l) => l.startsWith(REFUSED_MARK));
  assert(refused.length === 0, `the suite reached past the local server: ${[...new Set(refused)].join("; ")}`);
  return readResults(outDir);
}

/** The verdicts on one token's run, and its pass counts. */
async function judge(checks: Checks, role: string, results: Map<string, SuiteCheck[]>): Promise<void> {
  const unreviewed = [...results.keys()].filter((s) => !(s in SCENARIOS));
  const missing = Object.keys(SCENARIOS).filter((s) => !results.has(s));
  await checks.run(`conformance [${role}]: the suite ran exactly the ${Object.keys(SCENARIOS).length} reviewed server scenarios`, () => {
    assert(unreviewed.length === 0, `not reviewed in SCENARIOS: ${unreviewed.join(", ")}`);
    assert(missing.length === 0, `in SCENARIOS but not run: ${missing.join(", ")}`);
  });

  const totals = { passed: 0, failed: 0, pending: 0, warnings: 0 };
  for (const [scenario, verdict] of Object.entries(SCENARIOS)) {
    const list = results.get(scenario);
    if (!list || !verdict.applies) continue;
    const pending = verdict.pending ?? {};
    totals.warnings += count(list, "WARNING");
    await checks.run(`conformance [${role}] ${scenario}: every check passes${Object.keys(pending).length ? " but the pending ones" : ""}`, () => {
      const passed = count(list, "SUCCESS");
      const failed = failures(list).filter((c) => !(c.id in pending));
      totals.passed += passed;
      totals.failed += failed.length;
      totals.pending += failures(list).length - failed.length;
      assert(failed.length === 0, failed.map(describe).join("; "));
      assert(passed > 0, "no check passed");
      for (const [id, { why, fails }] of Object.entries(pending)) {
        const check = list.find((c) => c.id === id);
        assert(check, `the suite no longer has the pending check ${id}`);
        if (check.status === "SUCCESS") console.log(`note  conformance [${role}] ${scenario}: pending check ${id} now passes; remove it from pending`);
        else {
          assert(fails.test(check.errorMessage ?? ""), `pending ${describe(check)}, not for its stated reason (${why})`);
          console.log(`pend  conformance [${role}] ${scenario}: ${id} (${why})`);
        }
      }
      if (scenario === "dns-rebinding-protection") {
        const foreign = list.find((c) => c.id === "localhost-host-rebinding-rejected")?.details;
        assert(foreign?.statusCode === 403, `a foreign origin is refused by the origin check (403) even with a valid token, got ${JSON.stringify(foreign?.statusCode)}`);
      }
    });
  }

  const outOfScope = Object.entries(SCENARIOS).filter(([, v]) => !v.applies);
  await checks.run(`conformance [${role}]: the ${outOfScope.length} out-of-scope scenarios fail only for their stated reason`, () => {
    const wrong: string[] = [];
    for (const [scenario, verdict] of outOfScope) {
      if (verdict.applies) continue;
      const list = results.get(scenario) ?? [];
      for (const c of failures(list)) if (!verdict.fails.test(c.errorMessage ?? "")) wrong.push(`${scenario} ${describe(c)}`);
    }
    assert(wrong.length === 0, `${wrong.slice(0, 3).join("; ")}${wrong.length > 3 ? `; and ${wrong.length - 3} more` : ""}`);
  });

  const all = [...results.values()].flat();
  console.log(
    `conformance [${role}]: applicable ${totals.passed} checks passed, ${totals.failed} failed, ${totals.pending} pending, ${totals.warnings} warnings; ` +
      `whole suite ${count(all, "SUCCESS")} passed, ${count(all, "FAILURE")} failed, ${count(all, "WARNING")} warnings over ${results.size} scenarios`,
  );
}

/** Prints each out-of-scope scenario with why, once for the whole run. */
function listOutOfScope(): void {
  for (const [scenario, verdict] of Object.entries(SCENARIOS)) if (!verdict.applies) console.log(`skip  conformance ${scenario}: ${verdict.why}`);
}

/** The whole suite once with each token against the server at `base`; results kept under `dir`. */
export async function conformance(checks: Checks, base: string, tokens: { role: string; token: string }[], dir: string): Promise<void> {
  listOutOfScope();
  for (const { role, token } of tokens) {
    const results = await checks.run(`conformance [${role}]: the official suite runs against the local server only`, () =>
      runSuite(base, token, join(dir, `conformance-${role.replace(/\W+/g, "-")}`)),
    );
    if (results) await judge(checks, role, results);
  }
}
