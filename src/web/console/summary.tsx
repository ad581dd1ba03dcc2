/**
 * An activity entry's summary as a person reads it: the quoted titles and
 * names in it isolated as caller text (a right-to-left override in a title
 * cannot move the closing quote or the words after it), each id it holds a
 * link to what it names, its text that thing's name, and each thing said
 * once: an id followed by the text it names ("asked question apr_…: the
 * question", "waits on tsk_… "title"") becomes one link with that text; an
 * id whose text the entry says elsewhere (a rejection's comment, whose body
 * is the reason) a link with one word ("comment"); a label named new in
 * label_task's "(new: …)" is marked "(new)" where it is listed; a claim's
 * claimant, the entry's actor, is not named again. Stored
 * summaries stay as they were written; only their rendering changes.
 */
import type { Child, FC } from "hono/jsx";
import type { NamedRow } from "../../db/console.ts";
import { Written } from "./ui.tsx";

export type Named = NamedRow;

/** A quoted text (to its closing quote, or to the end of a cut summary), or an id that may name something. */
const PART = /"([^"\n]*)("|$)|\b((?:apr|run|stp|cmt|tsk|prj|trs|tok|ser|cal)_[0-9a-z]{16})\b/g;
const NAME_CLIP = 80;
/** A word outside quotes that carries a bidi control (a label's name in "(new: …)"): isolated too, so its override ends with it. */
const BIDI_WORD = /[^\s,()"]*[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069][^\s,()"]*/g;

/** Plain summary text, with any word that carries a bidi control isolated. */
function plain(text: string): Child[] {
  const out: Child[] = [];
  let last = 0;
  for (const m of text.matchAll(BIDI_WORD)) {
    out.push(text.slice(last, m.index), <Written text={m[0]} />);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

type Tok = { t: "plain"; s: string } | { t: "quote"; s: string; closed: boolean } | { t: "id"; id: string; end: number };

function tokens(text: string): Tok[] {
  const out: Tok[] = [];
  let last = 0;
  for (const m of text.matchAll(PART)) {
    if (m.index > last) out.push({ t: "plain", s: text.slice(last, m.index) });
    out.push(m[3] ? { t: "id", id: m[3], end: m.index + m[0].length } : { t: "quote", s: m[1], closed: m[2] === '"' });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ t: "plain", s: text.slice(last) });
  return out;
}

/** The words a summary puts before an id of each kind ("trash item trs_…"), the first the link's word when it has no name. */
const WORDS: Record<string, string[]> = {
  apr: ["question", "sign-off", "approval"], action: ["pending action"], run: ["run"], stp: ["step"], cmt: ["comment"],
  tsk: ["task"], prj: ["project"], trs: ["trash item", "trash"], tok: ["token"], ser: ["series"], cal: ["calendar link"],
};

const LABEL_TOOLS = new Set(["label_task", "unlabel_task", "create_label", "rename_label"]);
const PROJECT_TOOLS = new Set(["create_project", "update_project", "archive_project", "unarchive_project"]);

/** Text compared without a cut's "…" and surrounding space. */
const bare = (s: string) => s.replace(/…$/, "").trim();
/** Whether two texts are one, either cut short. */
const same = (a: string, b: string) => {
  const x = bare(a), y = bare(b);
  return x.length > 0 && y.length > 0 && (x.startsWith(y) || y.startsWith(x));
};

export interface SummaryProps {
  text: string;
  /** The tool that wrote it (labels and projects are named by quoted text in some tools' summaries). */
  tool?: string;
  /** The entry's target (a task, a project, …) when known. */
  target?: string | null;
  /** The task whose page shows the entry, when it is a task's page. */
  taskId?: string;
  named?: Map<string, Named>;
  /** The entry's actor as stored (`human` or an agent's name), which the page shows beside it. */
  actor?: string;
}

/** Where an id leads, or null when it names nothing a page shows. */
function hrefOf(id: string, n: Named | undefined, p: SummaryProps): string | null {
  const prefix = id.slice(0, 3);
  const task = n?.task_id ?? (p.target?.startsWith("tsk_") ? p.target : p.taskId) ?? null;
  const onTask = (anchor: string) => (task === null ? null : p.taskId === task ? anchor : `/tasks/${task}${anchor}`);
  if (n?.trashed) return `/trash#${n.trashed}`;
  switch (prefix) {
    case "apr":
      if (n?.kind === "action") return `/approvals/${id}`;
      if (n) return onTask(n.pending ? "#h-approval" : "#h-history");
      return onTask("#h-history") ?? `/approvals/${id}`;
    case "run":
      return onTask("#h-runs") ?? "/agents";
    case "stp":
    case "cmt":
      return task === null ? null : `/tasks/${task}/text/${id}`;
    case "tsk":
      return `/tasks/${id}`;
    case "prj":
      return `/tasks?project=${id}`;
    case "trs":
      return `/trash#${id}`;
    case "tok":
      return "/apps";
    default:
      return null;
  }
}

const Quoted: FC<{ text: string }> = ({ text }) => <>“<Written text={text} max={NAME_CLIP} />”</>;

export const Summary: FC<SummaryProps> = (p) => {
  let text = p.text;
  // claim_task names its claimant, who is the entry's actor, shown beside it already.
  if (p.tool === "claim_task" && p.actor && text.startsWith(`claimed by ${p.actor} and started`)) text = `claimed and started${text.slice(`claimed by ${p.actor} and started`.length)}`;
  // label_task's "(new: a, b)": said once, as "(new)" after each of those listed.
  let fresh: string | null = null;
  if (p.tool === "label_task") {
    const m = /^([\s\S]*) \(new: ([\s\S]*)\)$/.exec(text);
    if (m) [text, fresh] = [m[1], m[2]];
  }
  const toks = tokens(text);
  const quotes = toks.filter((t) => t.t === "quote").length;
  let quoteNo = 0;
  const out: Child[] = [];
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i];
    if (tok.t === "plain") {
      out.push(...plain(tok.s));
      continue;
    }
    if (tok.t === "quote") {
      quoteNo++;
      const shown = <>"<Written text={tok.s} />{tok.closed ? '"' : ""}</>;
      const label = p.tool && LABEL_TOOLS.has(p.tool) && tok.closed && (p.tool !== "rename_label" || quoteNo === quotes);
      const project = p.tool && PROJECT_TOOLS.has(p.tool) && p.target?.startsWith("prj_") && quoteNo === 1;
      if (label) out.push(<a href={`/tasks?label=${encodeURIComponent(tok.s)}`}>{shown}</a>);
      else if (project) out.push(<a href={`/tasks?project=${p.target}`}>{shown}</a>);
      else out.push(shown);
      if (fresh !== null && fresh.startsWith(tok.s) && (fresh.length === tok.s.length || fresh.startsWith(", ", tok.s.length))) {
        out.push(" (new)");
        fresh = fresh.slice(tok.s.length + 2);
      }
      continue;
    }
    const n = p.named?.get(tok.id);
    const href = hrefOf(tok.id, n, p);
    if (!href) {
      out.push(<code>{tok.id}</code>);
      continue;
    }
    const rest = text.slice(tok.end);
    const next = toks[i + 1], after = toks[i + 2];
    const name = n && n.kind !== "run" && n.kind !== "action" && n.text ? n.text : null;
    // An id followed by its title in quotes: one link, that title its text.
    if (next?.t === "plain" && next.s === " " && after?.t === "quote") {
      out.push(<a href={href}>"<Written text={after.s} />{after.closed ? '"' : ""}</a>);
      i += 2;
      continue;
    }
    // An id followed by ": " and the text it names, to the end: one link with that text.
    if (name && rest.startsWith(": ") && same(rest.slice(2), name)) {
      out.push(<a href={href}><Quoted text={name} /></a>);
      break;
    }
    // Its text said elsewhere in the entry (after the last ": "), or no text: a link with one word, the word before it taken in.
    const tail = text.includes(": ") ? bare(text.slice(text.lastIndexOf(": ") + 2)) : "";
    const elsewhere = name !== null && tail.length >= 3 && !rest.startsWith(": ") && name.includes(tail);
    if (name && !elsewhere) {
      out.push(<a href={href}><Quoted text={name} /></a>);
      continue;
    }
    const words = WORDS[n?.kind === "action" ? "action" : tok.id.slice(0, 3)] ?? ["this"];
    let word = words[0];
    const before = out.length ? out[out.length - 1] : null;
    if (typeof before === "string") {
      const w = words.find((x) => before.endsWith(`${x} `));
      if (w) {
        out[out.length - 1] = before.slice(0, before.length - w.length - 1);
        word = w;
      }
    }
    out.push(<a href={href}>{word}</a>);
  }
  // New names not found among those listed (a name with ", " in it, a cut summary): said as stored.
  if (fresh) out.push(" (new: ", ...plain(fresh), ")");
  return <bdi class="sum">{out}</bdi>;
};
