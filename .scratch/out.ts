import { pathToFileURL } from "node:url";
const root = process.argv[2];
const { describeAllTools, installTools } = await import(pathToFileURL(root + "/src/mcp/registry.ts").href) as any;
installTools((await import(pathToFileURL(root + "/src/tools/index.ts").href) as any).ALL_TOOLS);
const tools = describeAllTools();
for (const t of tools) if (process.argv.includes(t.name)) console.log(JSON.stringify(t.outputSchema, null, 1));
let n = 0; for (const t of tools) n += JSON.stringify(t.outputSchema).length;
console.log("output bytes", n, tools.filter((t: any) => t.outputSchema.$defs).map((t: any) => `${t.name}:${Object.keys(t.outputSchema.$defs)}`).join(" "));
