/**
 * The frame of every page: the stylesheet, the header with the signed-in
 * person and a Sign out form, and the page's content. Pages (and the web
 * console) render `<Layout title session>…</Layout>` and send it with
 * `page()`. Every value goes through JSX, which escapes it.
 */
import type { Child } from "hono/jsx";
import type { Session } from "./context.ts";
import { STYLESHEET_PATH } from "./style.ts";
import { ICON_PATH, MANIFEST_PATH } from "./pwa.ts";

export function SignOutForm(props: { session: Session }) {
  return (
    <form method="post" action="/signout">
      <span>{props.session.email}</span>
      <input type="hidden" name="csrf" value={props.session.csrfToken} />
      <button type="submit" class="secondary">Sign out</button>
    </form>
  );
}

/** `nav` and `bodyClass`: the web console's navigation and its page style; `script`: a script of this origin (Settings only). */
export function Layout(props: { title: string; session?: Session | null; wide?: boolean; nav?: Child; bodyClass?: string; script?: string; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Taskgate`}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        <link rel="manifest" href={MANIFEST_PATH} />
        <link rel="icon" href={ICON_PATH} type="image/svg+xml" />
        <meta name="theme-color" content="#1c2430" />
        {props.script ? <script src={props.script} defer></script> : null}
      </head>
      <body class={props.bodyClass}>
        {props.nav ? <a class="skip" href="#main">Skip to content</a> : null}
        <header class="top">
          <a class="brand" href="/">Taskgate</a>
          {props.nav ?? null}
          {props.session ? <SignOutForm session={props.session} /> : null}
        </header>
        <main id="main" class={props.wide ? "wide" : undefined}>{props.children}</main>
      </body>
    </html>
  );
}

/** A message in a coloured box: `error` for what went wrong, `warn` for what to look at twice. */
export function Notice(props: { kind: "error" | "warn"; children?: Child }) {
  return (
    <p class={`notice ${props.kind}`} role={props.kind === "error" ? "alert" : undefined}>
      {props.children}
    </p>
  );
}

/** The page for a request that can't go on: what went wrong and what to do. Never a stack trace. */
export function ErrorPage(props: { title: string; message: string; hint?: Child; session?: Session | null }) {
  return (
    <Layout title={props.title} session={props.session}>
      <section class="card">
        <h1>{props.title}</h1>
        <p>{props.message}</p>
        {props.hint ? <p class="muted">{props.hint}</p> : null}
      </section>
    </Layout>
  );
}
