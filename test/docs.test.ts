/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

/**
 * The README is the short guide and docs/ holds the rest: every relative
 * link between them (and to the project's files) must reach a file, and a
 * heading where it names one, so moving a section cannot leave a dead link.
 */
const PAGES = Object.fromEntries(
  Object.entries(import.meta.glob(["../README.md", "../docs/**/*.md"], { query: "?raw", import: "default", eager: true }) as Record<string, string>).map(
    ([key, text]) => [key.replace(/^\.\.\//, ""), text],
  ),
);
/** Every file of the project a page may link to (paths from the project's root). */
const FILES = new Set(
  Object.keys(import.meta.glob(["../**/*", "!../node_modules/**", "!../.wrangler/**", "!../screenshots/**"])).map((key) => key.replace(/^\.\.\//, "")),
);

const README_MAX_LINES = 300;

/** The page without fenced code blocks, where `[x](y)` and `# x` are not Markdown. */
function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** The page without code: no fences, no inline code spans. */
function prose(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Resolves `target` (relative to `page`) to a path from the project's root, or null when it leaves the project. */
function resolve(page: string, target: string): string | null {
  const parts = page.split("/").slice(0, -1);
  for (const part of decodeURIComponent(target).split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}

/** Every relative link of a page: `[text](target)` and `![alt](target)`, with its line for the message. */
function links(text: string): { target: string; line: number }[] {
  const body = prose(text);
  return [...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => ({ target: m[1], line: body.slice(0, m.index).split("\n").length }))
    .filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target));
}

describe("the README and docs/", () => {
  it("are found: the README and a page for each topic", () => {
    expect(Object.keys(PAGES)).toContain("README.md");
    expect(Object.keys(PAGES).filter((p) => p.startsWith("docs/")).length).toBeGreaterThanOrEqual(13);
    expect(FILES.has("src/catalog/effects.ts")).toBe(true);
  });

  it(`the README is a short guide: at most ${README_MAX_LINES} lines`, () => {
    expect(PAGES["README.md"].split("\n").length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("every relative link reaches a file, and a heading of it where the link names one", () => {
    const dead: string[] = [];
    let count = 0;
    for (const [page, text] of Object.entries(PAGES)) {
      for (const { target, line } of links(text)) {
        count++;
        const [path, anchor] = target.split("#", 2) as [string, string | undefined];
        const file = path === "" ? page : resolve(page, path);
        const isDir = file !== null && [...FILES].some((f) => f.startsWith(`${file.replace(/\/$/, "")}/`));
        if (file === null || (!FILES.has(file) && !isDir)) {
          dead.push(`${page}:${line}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined) {
          const headings = PAGES[file];
          if (headings === undefined) dead.push(`${page}:${line}: ${target} (an anchor into a file that is not a page)`);
          else if (!anchors(headings).has(anchor)) dead.push(`${page}:${line}: ${target} (no heading #${anchor} in ${file})`);
        }
      }
    }
    expect(dead).toEqual([]);
    expect(count).toBeGreaterThan(30);
  });

  it("the link checker itself: finds links outside code, resolves paths, and makes GitHub's anchors", () => {
    const page = "A [b](c.md#d-e) and `[x](y.md)`\n\n```\n[z](w.md)\n# Not a heading\n```\n![i](../images/p.png)";
    expect(links(page).map((l) => l.target)).toEqual(["c.md#d-e", "../images/p.png"]);
    expect(resolve("docs/a.md", "../README.md")).toBe("README.md");
    expect(resolve("docs/a.md", "images/p.png")).toBe("docs/images/p.png");
    expect(resolve("README.md", "../outside.md")).toBeNull();
    expect([...anchors("# Title\n## Toolsets: a narrower connection\n## What `_meta` says, and why\n## Title")]).toEqual([
      "title",
      "toolsets-a-narrower-connection",
      "what-_meta-says-and-why",
      "title-1",
    ]);
  });
});
