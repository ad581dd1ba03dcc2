/**
 * The one stylesheet of every page, served under a content-hashed path with a
 * year-long immutable cache: a change of the CSS is a new URL. The header
 * bar is the same on every page (sign-in, setup, consent and the console).
 */
import { CONSOLE_STYLES } from "./console/style.ts";

const CSS = `
:root { --ink: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #f5f6f8; --card: #fff; --accent: #2f5bd3; --accent-ink: #fff; --warn-bg: #fff5e0; --warn: #8a5200; --bad-bg: #fdecec; --bad: #a32020; }
* { box-sizing: border-box; }
html { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
body { margin: 0; }
a { color: var(--accent); }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem 1rem; padding: .5rem 1rem; background: #1c2430; color: #fff; border: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
header.top .brand { color: #fff; font-weight: 700; text-decoration: none; font-size: 1.05rem; line-height: 1.5; padding: .35rem 0; }
header.top form { display: flex; align-items: center; gap: .6rem; margin: 0 0 0 auto; color: #aab3c0; font-size: .85rem; min-width: 0; }
header.top form span { max-width: 13rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
header.top form button { font: inherit; font-size: .85rem; font-weight: 600; line-height: 1.3; border-radius: 7px; background: transparent; color: #fff; border: 1px solid #55627a; padding: .25rem .6rem; }
header.top form button:hover { background: #2c3747; }
@media (max-width: 1200px) { header.top form span { max-width: 9rem; } }
main { max-width: 34rem; margin: 2rem auto; padding: 0 1rem; }
main.wide { max-width: 60rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1.5rem; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; line-height: 1.3; }
h2 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
p { margin: .5rem 0; }
.muted { color: var(--muted); font-size: .92rem; }
.means { font-size: .92rem; margin: .2rem 0 .5rem 1.6rem; }
.means p { margin: .3rem 0; }
.means ul { margin: .2rem 0; padding-left: 1.2rem; }
label { display: block; font-weight: 600; margin: 1rem 0 .3rem; }
input[type=email], input[type=password], input[type=text], input:not([type]) { width: 100%; padding: .55rem .65rem; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
input:focus, button:focus { outline: 2px solid var(--accent); outline-offset: 1px; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 1rem 0; padding: .5rem 1rem .9rem; }
legend { font-weight: 600; padding: 0 .3rem; }
fieldset label { font-weight: 400; display: flex; gap: .5rem; align-items: center; margin: .45rem 0; }
.toolsets { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: 0 1rem; margin-left: 1.6rem; }
fieldset label.field { display: block; font-weight: 600; margin-top: .8rem; }
button { font: inherit; padding: .55rem 1.1rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-ink); cursor: pointer; white-space: nowrap; }
button.secondary { background: #fff; color: var(--ink); border-color: var(--line); }
.actions { display: flex; gap: .75rem; margin-top: 1.25rem; }
.notice { padding: .7rem .9rem; border-radius: 6px; margin: 1rem 0; }
.notice.error { background: var(--bad-bg); color: var(--bad); }
.notice.warn { background: var(--warn-bg); color: var(--warn); }
.facts { margin: 1rem 0; padding: 0; list-style: none; }
.facts li { padding: .35rem 0; border-bottom: 1px solid var(--line); }
.facts li:last-child { border-bottom: 0; }
bdi.u { unicode-bidi: isolate; overflow-wrap: anywhere; }
code { background: var(--bg); padding: .1rem .3rem; border-radius: 4px; font-size: .9em; overflow-wrap: anywhere; }
`.trim() + CONSOLE_STYLES;

/** FNV-1a, 32 bits, hex: enough to version one file. */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

export const STYLESHEET_PATH = `/assets/taskgate-${fnv1a(CSS)}.css`;

export function stylesheetResponse(): Response {
  return new Response(CSS, {
    headers: {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    },
  });
}
