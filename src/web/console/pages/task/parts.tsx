/** What the task page's sections share: how much of each list and text it shows, and a shortened text with the way to the whole. */
import type { FC } from "hono/jsx";
import { clip } from "../../format.ts";
import { Written } from "../../ui.tsx";

export const TASK_LIMITS = { steps: 25, refs: 10, labels: 20, comments: 10, events: 10, history: 10, links: 20, accountLabels: 200, notesClip: 4000, textClip: 800, lineClip: 200 };
export const REF_CLIP = 120;

/** A shortened text, and the way to the whole of it. */
export const Text: FC<{ text: string; max: number; href: string }> = ({ text, max, href }) => {
  const c = clip(text, max);
  return (
    <span class="body">
      <Written text={c.text} />
      {c.cut ? <> <a href={href}>Read all</a></> : null}
    </span>
  );
};
