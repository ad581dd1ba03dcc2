/**
 * The console's frame and shared pieces. Everything a user or an agent wrote
 * is passed to JSX as text, which hono/jsx escapes; nothing here uses raw().
 */
import type { Child, FC, PropsWithChildren } from "hono/jsx";
import { Layout } from "../layout.tsx";
import type { Session } from "../context.ts";
import { absolute, clip, relative, statusWord } from "./format.ts";
import { newFormId } from "./once.ts";

/** What every page and form needs to know about the request it renders for. */
export interface View {
  session: Session;
  csrf: string;
  /** This page's path and query: where a form on it comes back to. */
  back: string;
  timeZone: string;
  nowMs: number;
  accountName: string;
  /** The account's auto-OK default for new tasks (Settings), which a project may follow or override. */
  accountAutoOk: boolean;
  pendingCount: number;
  flash: Flash | null;
}

export interface Flash {
  kind: "ok" | "error";
  text: string;
  /** A refused form's field to look at (its tool argument's name). */
  field?: string;
  /** A refused form's typed values, shown again so nothing typed is lost. */
  values?: Record<string, string>;
}

/** What the person typed into field `name` of a form that was just refused, if it was. */
export const typed = (view: View, name: string): string | undefined => view.flash?.values?.[name];

/** Whether field `name` is the one a refusal named. */
export const invalidField = (view: View, name: string): "true" | undefined => (view.flash?.kind === "error" && view.flash.field === name ? "true" : undefined);

export type Section = "inbox" | "tasks" | "agents" | "apps" | "webhooks" | "trash" | "activity" | "settings";

const NAV: { section: Section; href: string; label: string }[] = [
  { section: "inbox", href: "/", label: "Inbox" },
  { section: "tasks", href: "/tasks", label: "Tasks" },
  { section: "agents", href: "/agents", label: "Agents" },
  { section: "apps", href: "/apps", label: "Apps & tokens" },
  { section: "webhooks", href: "/webhooks", label: "Webhooks" },
  { section: "trash", href: "/trash", label: "Trash" },
  { section: "activity", href: "/activity", label: "Activity" },
  { section: "settings", href: "/settings", label: "Settings" },
];

const Nav: FC<{ section: Section | null; pending: number }> = ({ section, pending }) => (
  <nav aria-label="Console">
    <ul>
      {NAV.map((n) => (
        <li>
          <a href={n.href} aria-current={n.section === section ? "page" : undefined}>
            {n.label}
            {n.section === "inbox" && pending > 0 ? <span class="count" aria-label={`${pending} pending`}>{pending}</span> : null}
          </a>
        </li>
      ))}
    </ul>
  </nav>
);

/** Every console page: the shared layout with the console's navigation, the pending count in the title, and the flash message. */
export const Shell: FC<PropsWithChildren<{ view: View; section: Section | null; title: string; script?: string }>> = ({ view, section, title, script, children }) => {
  const pending = view.pendingCount;
  return (
    <Layout title={`${pending > 0 ? `(${pending}) ` : ""}${title}`} session={view.session} bodyClass="console" script={script} nav={<Nav section={section} pending={pending} />}>
      {view.flash ? (
        <div class={`flash ${view.flash.kind}`} role={view.flash.kind === "error" ? "alert" : "status"}>
          {view.flash.text}
        </div>
      ) : null}
      {children}
    </Layout>
  );
};

/**
 * A POST form to one console action, with the CSRF token and the way back.
 * `once`: a form that creates something carries a key of its own for the
 * tool's idempotency_key, so sending the same form again replays the first
 * result instead of creating a second one.
 */
export const Act: FC<PropsWithChildren<{ view: View; action: string; fields?: Record<string, string>; class?: string; back?: string; label?: string; once?: boolean }>> = (p) => (
  <form method="post" action={`/act/${p.action}`} class={p.class} aria-label={p.label}>
    <input type="hidden" name="csrf" value={p.view.csrf} />
    <input type="hidden" name="back" value={p.back ?? p.view.back} />
    {p.once ? <input type="hidden" name="idempotency_key" value={`form-${newFormId()}`} /> : null}
    {Object.entries(p.fields ?? {}).map(([name, value]) => (
      <input type="hidden" name={name} value={value} />
    ))}
    {p.children}
  </form>
);

/**
 * The start of an action that cannot wait: a GET form to its confirmation
 * step (/confirm/:action), which shows what will happen and changes nothing;
 * the step's own form acts. Its fields name the thing; no security token
 * travels in the address.
 */
export const AskFirst: FC<PropsWithChildren<{ view: View; action: string; fields?: Record<string, string>; class?: string; back?: string; label?: string }>> = (p) => (
  <form method="get" action={`/confirm/${p.action}`} class={p.class} aria-label={p.label}>
    {Object.entries(p.fields ?? {}).map(([name, value]) => (
      <input type="hidden" name={name} value={value} />
    ))}
    <input type="hidden" name="back" value={p.back ?? p.view.back} />
    {p.children}
  </form>
);

/** A submit button; `label` names it for assistive technology when its text alone is ambiguous (it must contain that text). */
export const Button: FC<PropsWithChildren<{ kind?: "primary" | "danger" | "link"; label?: string }>> = ({ kind, label, children }) => (
  <button type="submit" class={kind} aria-label={label}>{children}</button>
);

export const Badge: FC<{ status: string; text?: string }> = ({ status, text }) => (
  <span class={`badge s-${status}`}>{text ?? statusWord(status)}</span>
);

export const When: FC<{ view: View; iso: string | null; prefix?: string }> = ({ view, iso, prefix }) =>
  iso ? (
    <time datetime={iso} title={absolute(iso, view.timeZone)}>
      {prefix ?? ""}
      {relative(iso, view.nowMs, view.timeZone)}
    </time>
  ) : (
    <span class="muted">never</span>
  );

/** How much of a cut text its hover shows (longer texts have a page of their own). */
const HOVER_MAX = 2000;

/**
 * Text an agent, an app or a person wrote (a title, a name, a note): isolated
 * from the words around it, so a right-to-left override inside cannot turn
 * them around; broken anywhere rather than widening the page; and, when cut
 * to `max` characters, whole on hover. Every page prints caller text with it.
 */
export const Written: FC<{ text: string | null | undefined; max?: number; class?: string }> = ({ text, max, class: cls }) => {
  const whole = text ?? "";
  const c = max ? clip(whole, max) : { text: whole, cut: false };
  return (
    <bdi class={cls ? `u ${cls}` : "u"} title={c.cut ? whole.slice(0, HOVER_MAX) : undefined}>
      {c.text}
    </bdi>
  );
};

export const Empty: FC<PropsWithChildren> = ({ children }) => <p class="empty">{children}</p>;

export const Field: FC<PropsWithChildren<{ id: string; label: string; hint?: Child; class?: string }>> = ({ id, label, hint, class: cls, children }) => (
  <div class={cls}>
    <label for={id}>{label}</label>
    {children}
    {hint ? <p class="hint" id={`${id}-hint`}>{hint}</p> : null}
  </div>
);
