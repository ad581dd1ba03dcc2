/**
 * The console's rules, appended to the one stylesheet of every page (served
 * at a content-hashed URL with a year of cache lifetime). No inline styles
 * anywhere: the CSP forbids them.
 */
const CONSOLE_CSS = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1c2430;--muted:#5b6573;--line:#dde1e7;--accent:#3d5afe;--accent-ink:#fff;
--ok:#1b7f4b;--ok-bg:#e6f5ec;--warn:#8a5a00;--warn-bg:#fff4d6;--bad:#b3261e;--bad-bg:#fdeceb;--info-bg:#eef1ff;
--radius:10px;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color-scheme:light}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font-size:15px;line-height:1.5}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
h4{font-size:.9rem;font-weight:600;margin:.6rem 0 .2rem}
.skip{position:absolute;left:-999px;top:0;background:var(--card);padding:.5rem 1rem;z-index:2}
.skip:focus{left:.5rem}
header.top nav{flex:0 1 auto;overflow-x:auto}
header.top nav ul{display:flex;gap:.2rem;list-style:none;margin:0;padding:0}
header.top nav a{display:block;color:#d5dae3;text-decoration:none;padding:.35rem .55rem;border-radius:6px;white-space:nowrap}
header.top nav a:hover{background:#2c3747;color:#fff}
header.top nav a[aria-current=page]{background:#3a475b;color:#fff;font-weight:600}
.count{display:inline-block;min-width:1.4em;padding:0 .4em;margin-left:.3em;border-radius:99px;background:#ffb300;color:#1c2430;font-size:.8em;font-weight:700;text-align:center}
main{max-width:1080px;margin:0 auto;padding:1rem}
main.wide{max-width:1080px}
h1{font-size:1.45rem;margin:.4rem 0 1rem}
h2{font-size:1.1rem;margin:1.4rem 0 .6rem}
h3{font-size:1rem;margin:0 0 .3rem}
.muted,.hint{color:var(--muted)}
.hint{font-size:.85rem;margin:.2rem 0 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:1rem;margin:0 0 1rem}
.card>:last-child{margin-bottom:0}
.card>:first-child{margin-top:0}
.card h3{margin-top:.9rem}
.card h2 a{text-decoration:none}
.card h2 a:hover{text-decoration:underline}
.created{border:2px solid var(--accent)}
.flash{border-radius:var(--radius);padding:.7rem 1rem;margin:0 0 1rem;border:1px solid}
.flash.ok{background:var(--ok-bg);border-color:#b5dfc5;color:#124d2f}
.flash.error{background:var(--bad-bg);border-color:#f2c1bd;color:#7a1a14}
.secret{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#1c2430;color:#e8ecf2;padding:.6rem .8rem;border-radius:8px;overflow-x:auto;white-space:pre;font-size:.85rem}
pre{margin:.4rem 0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:99px;font-size:.78rem;font-weight:600;background:#eceff3;color:#3a4350;white-space:nowrap}
.s-open{background:#eceff3}.s-in_progress,.s-running{background:var(--info-bg);color:#2a3eb1}
.s-blocked,.s-failed,.s-auth_failed,.s-revoked,.s-expired{background:var(--bad-bg);color:var(--bad)}
.s-awaiting_approval,.s-paused,.s-pending{background:var(--warn-bg);color:var(--warn)}
.s-done,.s-succeeded,.s-active,.s-connected,.s-approved{background:var(--ok-bg);color:#146038}
.s-cancelled,.s-not_connected,.s-closed,.s-step_pending,.s-step_skipped{background:#f1f2f4;color:#555d69}
.s-step_in_progress{background:var(--info-bg);color:#2a3eb1}.s-step_done{background:var(--ok-bg);color:#146038}
.s-rejected{background:var(--bad-bg);color:var(--bad)}
.meta{display:flex;flex-wrap:wrap;gap:.35rem .9rem;color:var(--muted);font-size:.85rem;margin:.2rem 0 .6rem}
.row{display:flex;flex-wrap:wrap;gap:.6rem;align-items:flex-end}
.row>*{margin:0}
.row.top{align-items:flex-start}
.row>.end{align-self:flex-end}
.grow{flex:1 1 16rem}
label{display:block;font-weight:600;font-size:.85rem;margin:0 0 .2rem}
.check{display:flex;gap:.4rem;align-items:center;font-weight:400}
.check code{flex:none}
input[type=text],input[type=url],input[type=search],input[type=number],input[type=datetime-local],select,textarea{width:100%;font:inherit;padding:.45rem .6rem;border:1px solid #c3c9d2;border-radius:7px;background:#fff;color:var(--ink)}
textarea{min-height:4.5rem;resize:vertical}
button,.button{font:inherit;font-weight:600;border:1px solid #c3c9d2;background:#fff;color:var(--ink);padding:.45rem .9rem;border-radius:7px;cursor:pointer;text-decoration:none;display:inline-block;line-height:1.3}
button:hover,.button:hover{background:#f1f3f6}
button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-ink)}
button.primary:hover{background:#2f49e0}
button.danger{color:var(--bad);border-color:#e6b3af}
button.danger:hover{background:var(--bad-bg)}
button.link{border:0;background:none;color:var(--accent);padding:0;font-weight:400;text-decoration:underline}
form.inline{display:inline}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-start;margin-top:.6rem}
.actions form{margin:0}
main>.actions{margin:0 0 1rem}
.card form+form{margin-top:.9rem}
.actions form+form{margin-top:0}
.reject{display:flex;gap:.5rem;flex:1 1 18rem;align-items:flex-start}
.reject textarea{min-height:2.4rem;field-sizing:content}
.answer{flex:1 1 18rem}
.answer fieldset{border:1px solid var(--line);border-radius:8px;margin:0 0 .5rem;padding:.2rem .7rem .5rem}
.answer legend{font-weight:600;font-size:.85rem}
.answer textarea{margin-bottom:.5rem}
table{width:100%;border-collapse:collapse;background:var(--card)}
th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;color:var(--muted);font-weight:600;text-transform:uppercase;letter-spacing:.03em}
.table{border:1px solid var(--line);border-radius:var(--radius);overflow:hidden;margin:.6rem 0 1rem}
td code{overflow-wrap:normal}
td[data-label=URL]{min-width:22rem}
td[data-label=URL] code{overflow-wrap:anywhere}
.table tr:last-child td{border-bottom:0}
.clamp{display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden;overflow-wrap:anywhere}
.clamp:hover,.clamp:focus{-webkit-line-clamp:unset;overflow:visible}
td.one{max-width:12rem}
td.one>span{display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
table.tasks td[data-label=Task]{width:45%}
table.tasks td:not([data-label=Task]){white-space:nowrap}
.log{list-style:none;margin:.3rem 0;padding:0;border-left:3px solid var(--line)}
.log li{padding:.15rem 0 .15rem .7rem;font-size:.9rem}
.log time,.when{color:var(--muted);font-size:.8rem}
.comments{list-style:none;padding:0;margin:.3rem 0}
.comments li{border-top:1px solid var(--line);padding:.45rem 0}
.comments li:first-child{border-top:0}
.body{white-space:pre-wrap;overflow-wrap:anywhere}
.q{background:var(--warn-bg);border-radius:8px;padding:.5rem .7rem;margin:.4rem 0;white-space:pre-wrap;overflow-wrap:anywhere}
.card.stretch{display:flex;flex-direction:column}
.card.stretch>.fill{flex:1 0 auto}
.card.stretch>.fill>:first-child{margin-top:0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem;margin:0 0 1rem}
.grid>.card{margin:0}
.grid.wide{grid-template-columns:repeat(auto-fill,minmax(min(100%,26rem),1fr))}
.split{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:1rem}
.filters{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:.8rem;margin:0 0 1rem}
.filters .row>div{flex:1 1 9rem}
.filters .row>div.grow{flex:1 1 100%}
.filters .row+.row{margin-top:.6rem}
.filters .row>div.buttons{flex:0 0 auto;display:flex;gap:.5rem}
.tabs{display:flex;flex-wrap:wrap;gap:.3rem;margin:0 0 .8rem;padding:0;list-style:none}
.tabs a{display:block;padding:.25rem .7rem;border-radius:99px;border:1px solid var(--line);background:var(--card);text-decoration:none;color:var(--ink);font-size:.9rem}
.tabs a[aria-current=page]{background:var(--ink);color:#fff;border-color:var(--ink)}.tabs a[aria-current=page] .muted{color:#d5dae1}
.empty{color:var(--muted);text-align:center;padding:2rem 1rem}
.steps{padding-left:1.3rem;margin:.3rem 0}
.steps .done{text-decoration:line-through;color:var(--muted)}
details{margin:.4rem 0}
details summary{cursor:pointer;font-weight:600}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;margin:0}
.kv dt{color:var(--muted)}.kv dd{margin:0}
.pager{display:flex;justify-content:flex-end;margin:.5rem 0}
.s-allow{background:var(--ok-bg);color:#146038}.s-ask{background:var(--warn-bg);color:var(--warn)}.s-deny{background:var(--bad-bg);color:var(--bad)}
.rules{padding-left:1.4rem;margin:.3rem 0 .6rem}.rules li{margin:.25rem 0}
label.choice{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;font-size:.95rem;margin:.35rem 0}
label.choice input{margin-top:.3rem}
.choice>span{display:block}.choice .hint{display:block;font-weight:400}
.pick{display:flex;flex-wrap:wrap;gap:.2rem .8rem;align-items:center;margin:.2rem 0}
.pick label{margin:0}.pick select{flex:1 1 14rem;width:auto;min-width:0;max-width:100%}
main fieldset{min-width:0}
@media (max-width:720px){
 .split{grid-template-columns:1fr}
 header.top nav{order:3;flex-basis:100%;overflow:visible}
 header.top nav ul{flex-wrap:wrap}
 .reject{flex-direction:column;align-items:stretch}
 .reject button{align-self:flex-start}
 .reject textarea{min-height:4.2rem}
 header.top form{margin-left:auto}
 table.stack thead{display:none}
 table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.4rem 0}
 table.stack td{display:block;border:0;padding:.15rem .7rem;min-width:0}
 table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:.8rem}
 table.tasks tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:.1rem .7rem;padding:.45rem .7rem}
 table.tasks td{padding:0;font-size:.82rem;color:var(--muted)}
 table.tasks td[data-label]::before{content:none}
 table.tasks td[data-label=Task]{flex:1 1 100%;width:auto;font-size:.95rem;color:var(--ink)}
 table.tasks td[data-label=Priority]::before{content:"priority "}
 table.tasks td.one{max-width:9rem}
 main{padding:.7rem}
 .card .row>div{flex:1 1 100%}
}
.parts .part-acts{display:flex;flex-wrap:wrap;gap:.3rem;margin:.25rem 0 .1rem}
.parts .part-acts form{margin:0}
.parts .part-acts button,.parts .pick button,.parts .found button{padding:.15rem .55rem;font-size:.82rem}
.parts a.change{font-size:.85rem}
.parts .step-edit{border-left:3px solid var(--line);padding:.1rem 0 .1rem .7rem;margin:.3rem 0 .5rem}
.parts .step-edit form{margin:.4rem 0 0}
.parts .steps>li{margin:.15rem 0 .6rem;overflow-wrap:anywhere}
.parts .steps .done{text-decoration:none;color:inherit}
.parts .steps .done>.body{text-decoration:line-through;color:var(--muted)}
.parts details{margin:.2rem 0}
.parts details summary{font-size:.88rem}
.parts details>form{margin:.4rem 0 .6rem}
.parts ul.plain{list-style:none;padding:0;margin:.3rem 0}
.parts ul.plain>li{margin:.3rem 0;overflow-wrap:anywhere;min-width:0}
.parts ul.labels>li{display:flex;flex-wrap:wrap;gap:.1rem .5rem;align-items:baseline}
.parts ul.labels .badge.label{white-space:normal;overflow-wrap:anywhere;max-width:100%}
.parts .links .meta{display:flex;flex-wrap:wrap;gap:.1rem .8rem;align-items:baseline}
.parts .pick input{flex:1 1 10rem;width:auto;min-width:0;max-width:100%}
details.archived{margin:0 0 .8rem}
details.archived summary{cursor:pointer;color:var(--muted);font-size:.9rem;margin:0 0 .4rem}
h1.confirm-heading,.confirm .facts li{overflow-wrap:anywhere}
.confirm .facts{margin:.4rem 0 .8rem}
`;

/**
 * Scopes every rule to the console's `<body class="console">`, so the
 * stylesheet shared with the sign-in and consent pages changes nothing there:
 * `:root` and `body` become `body.console`, every other selector is prefixed.
 */
export function scoped(css: string, scope = "body.console"): string {
  const prefix = (selectors: string) =>
    selectors
      .split(",")
      .map((sel) => {
        const t = sel.trim();
        if (t === ":root" || t === "body") return scope;
        if (t.startsWith("body")) return scope + t.slice(4);
        return `${scope} ${t}`;
      })
      .join(",");
  let out = "";
  let i = 0;
  while (i < css.length) {
    const open = css.indexOf("{", i);
    if (open < 0) break;
    const head = css.slice(i, open).trim();
    if (head.startsWith("@")) {
      out += `${head}{`;
      i = open + 1;
    } else {
      const close = css.indexOf("}", open);
      out += prefix(head) + css.slice(open, close + 1);
      i = close + 1;
    }
    while (i < css.length && /[\s}]/.test(css[i])) {
      if (css[i] === "}") out += "}";
      i++;
    }
  }
  return out;
}

export const CONSOLE_STYLES = scoped(CONSOLE_CSS);
