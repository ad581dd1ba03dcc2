/**
 * Prints the tool catalog of docs/tools.md as Markdown: the groups are the
 * toolsets of src/catalog/toolsets.ts, the marks come from annotationsFor() and
 * HUMAN_TOOLS (src/catalog/effects.ts), so the docs cannot disagree with what
 * tools/list announces. Run: npm run -s catalog
 */
import { annotationsFor, HUMAN_TOOLS, TOOL_NAMES, WRITE_TOOLS } from "../../src/catalog/effects.ts";
import { TOOLSETS } from "../../src/catalog/toolsets.ts";

const listed = TOOLSETS.flatMap((g) => g.tools);
if (listed.length !== TOOL_NAMES.length) throw new Error(`found ${listed.length} tools in the toolsets, effects.ts has ${TOOL_NAMES.length}`);

const mark = (on: boolean) => (on ? "✓" : "");
const out: string[] = [];
for (const g of TOOLSETS) {
  const reads = g.tools.filter((t) => !WRITE_TOOLS.has(t)).length;
  out.push(`**${g.title}** (toolset \`${g.name}\`: ${reads} read, ${g.tools.length - reads} write)`, "");
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
