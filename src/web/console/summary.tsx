/**
 * An activity entry's summary as a person reads it: the quoted titles and
 * names in it isolated as caller text (a right-to-left override in a title
 * cannot move the closing quote or the words after it), and the ids of
 * questions, runs, steps and comments replaced by what they name, linked.
 */
import type { Child, FC } from "hono/jsx";
import { Written } from "./ui.tsx";

export interface Named {
  id: string;
  kind: "approval" | "run" | "step" | "comment";
  text: string;
  trashed: string | null;
}

/** A quoted text (to its closing quote, or to the end of a cut summary), or an id that may name something. */
const PART = /"([^"\n]*)("|$)|\b((?:apr|run|stp|cmt)_[0-9a-z]{16})\b/g;
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

const What: FC<{ n: Named; taskId: string; pending: string | null }> = ({ n, taskId, pending }) => {
  const quoted = <>“<Written text={n.text} max={NAME_CLIP} />”</>;
  switch (n.kind) {
    case "approval":
      return pending === n.id ? <a href="#h-approval">{quoted}</a> : quoted;
    case "run":
      return <a href="/agents">by <Written text={n.text} /></a>;
    case "step":
    case "comment":
      return n.trashed ? <>{quoted} (deleted)</> : <a href={`/tasks/${taskId}/text/${n.id}`}>{quoted}</a>;
  }
};

export const Summary: FC<{ text: string; taskId?: string; named?: Map<string, Named>; pending?: string | null }> = ({ text, taskId, named, pending }) => {
  const out: Child[] = [];
  let last = 0;
  for (const m of text.matchAll(PART)) {
    out.push(...plain(text.slice(last, m.index)));
    if (m[3]) {
      const n = named?.get(m[3]);
      out.push(n && taskId ? <What n={n} taskId={taskId} pending={pending ?? null} /> : <code>{m[3]}</code>);
    } else {
      out.push(<>"<Written text={m[1]} />{m[2]}</>);
    }
    last = m.index + m[0].length;
  }
  out.push(...plain(text.slice(last)));
  return <bdi class="sum">{out}</bdi>;
};
