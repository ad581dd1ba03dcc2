/**
 * Prints the README's tool catalog as Markdown, from src/mcp/effects.ts: the
 * groups are the `// Group` comments of TOOL_TITLES, the marks come from
 * annotationsFor() and HUMAN_TOOLS, so the README cannot disagree with what
 * tools/list announces. Run: npm run -s catalog
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { annotationsFor, HUMAN_TOOLS, isToolName, TOOL_NAMES, WRITE_TOOLS, type ToolName } from "../../src/mcp/effects.ts";
import { ROOT } from "./d1.ts";

const source = readFileSync(join(ROOT, "src", "mcp", "effects.ts"), "utf8");
const titles = source.slice(source.indexOf("export const TOOL_TITLES"), source.indexOf("} as const;"));

const groups: { name: string; tools: ToolName[] }[] = [];
for (const line of titles.split("\n")) {
  const group = /^\s*\/\/\s*(.+?)\s*$/.exec(line);
  if (group) {
    groups.push({ name: group[1], tools: [] });
    continue;
  }
  const tool = /^\s*([a-z_]+):\s*"/.exec(line);
  if (tool && isToolName(tool[1])) groups[groups.length - 1].tools.push(tool[1]);
}
const listed = groups.flatMap((g) => g.tools);
if (listed.length !== TOOL_NAMES.length) throw new Error(`found ${listed.length} tools in the groups, effects.ts has ${TOOL_NAMES.length}`);

const mark = (on: boolean) => (on ? "✓" : "");
const out: string[] = [];
for (const g of groups) {
  const reads = g.tools.filter((t) => !WRITE_TOOLS.has(t)).length;
  out.push(`**${g.name}** (${reads} read, ${g.tools.length - reads} write)`, "");
  out.push("| tool | title | read-only | destructive | idempotent | open world | people only |", "|---|---|:-:|:-:|:-:|:-:|:-:|");
  for (const t of g.tools) {
    const a = annotationsFor(t);
    out.push(
      `| \`${t}\` | ${a.title} | ${mark(a.readOnlyHint)} | ${mark(a.destructiveHint)} | ${mark(a.idempotentHint)} | ${mark(a.openWorldHint)} | ${mark(HUMAN_TOOLS.has(t))} |`,
    );
  }
  out.push("");
}
const writes = TOOL_NAMES.filter((t) => WRITE_TOOLS.has(t));
out.push(
  `${TOOL_NAMES.length} tools: ${TOOL_NAMES.length - writes.length} read, ${writes.length} write; ` +
    `${TOOL_NAMES.filter((t) => annotationsFor(t).destructiveHint).length} destructive; ` +
    `${writes.filter((t) => annotationsFor(t).idempotentHint).length} idempotent writes; ` +
    `${TOOL_NAMES.filter((t) => annotationsFor(t).openWorldHint).length} open world; ${HUMAN_TOOLS.size} for people only.`,
);
console.log(out.join("\n"));
