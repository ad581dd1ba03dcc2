import { pathToFileURL } from "node:url";
const root = process.argv[2];
const { z } = await import(pathToFileURL(root + "/node_modules/zod/index.js").href) as any;
const { ALL_TOOLS } = await import(pathToFileURL(root + "/src/tools/index.ts").href) as any;
let total = 0; let dupSave = 0; const big: [string, number][] = [];
for (const t of ALL_TOOLS) {
  const j = z.toJSONSchema(t.output, { io: "output", unrepresentable: "any" }) as any; delete j.$schema;
  const s = JSON.stringify(j, (k, v) => (k === "description" ? undefined : v)); total += s.length; big.push([t.name, s.length]);
  const seen = new Map<string, number>();
  const walk = (n: any, top: boolean) => { if (!n || typeof n !== "object") return; if (Array.isArray(n)) return n.forEach((x) => walk(x, false));
    if (!top && n.type === "object" && n.properties) { const k = JSON.stringify(n); seen.set(k, (seen.get(k) ?? 0) + 1); }
    for (const v of Object.values(n)) walk(v, false); };
  walk(j, true);
  for (const [k, c] of seen) if (c > 1) { dupSave += (c - 1) * k.length; if (process.argv[3] === "dups") console.log(t.name, c, k.length, k.slice(0, 80)); }
  if (process.argv[3] === t.name) console.log(JSON.stringify(j));
}
big.sort((a, b) => b[1] - a[1]);
console.log({ total, per: total / ALL_TOOLS.length, dupSave }, big.slice(0, 12));
