import type { FC, PropsWithChildren } from "hono/jsx";
import { Shell, type Section, type View } from "../ui.tsx";

/** A page that says why it cannot show or do what was asked; never a stack trace. */
export const MessagePage: FC<PropsWithChildren<{ view: View; title: string; section?: Section }>> = ({ view, title, section, children }) => (
  <Shell view={view} section={section ?? null} title={title}>
    <h1>{title}</h1>
    <p class="card">{children}</p>
    <p><a href="/">Back to the inbox</a></p>
  </Shell>
);
