/**
 * The approvals view (MCP Apps): one hand-written document, its CSS and
 * script inline, served as `ui://taskgate/approvals` (app-view.ts). It speaks
 * the ext-apps postMessage protocol itself (ui/initialize, tool results,
 * tools/call, ui/open-link), so it loads nothing and connects nowhere. Every
 * text an agent or a person wrote goes in with textContent.
 */
const CSS = `
:root{color-scheme:light dark;--bg:var(--color-background-primary,#fff);--bg2:var(--color-background-secondary,#f4f4f5);--fg:var(--color-text-primary,#18181b);--fg2:var(--color-text-secondary,#52525b);--bd:var(--color-border-primary,#d4d4d8);--ok:#15803d;--no:#b91c1c;--r:var(--border-radius-md,8px)}
:root[data-theme=dark]{--bg:var(--color-background-primary,#18181b);--bg2:var(--color-background-secondary,#27272a);--fg:var(--color-text-primary,#f4f4f5);--fg2:var(--color-text-secondary,#a1a1aa);--bd:var(--color-border-primary,#3f3f46);--ok:#4ade80;--no:#f87171}
@media (prefers-color-scheme:dark){:root:not([data-theme]){--bg:#18181b;--bg2:#27272a;--fg:#f4f4f5;--fg2:#a1a1aa;--bd:#3f3f46;--ok:#4ade80;--no:#f87171}}
:root[data-theme=light]{color-scheme:light}:root[data-theme=dark]{color-scheme:dark}
*{box-sizing:border-box}
body{margin:0;padding:12px;background:var(--bg);color:var(--fg);font:14px/1.45 var(--font-sans,system-ui,-apple-system,"Segoe UI",sans-serif);overflow-wrap:anywhere}
header{display:flex;justify-content:space-between;align-items:baseline;gap:8px;margin-bottom:8px}
h1{font-size:16px;margin:0}h2{font-size:15px;margin:4px 0}
.muted,.meta{color:var(--fg2);font-size:13px}
#status{min-height:1.2em;margin:0 0 8px}
.card{border:1px solid var(--bd);border-radius:var(--r);padding:12px;margin:0 0 10px;background:var(--bg)}
.kind{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:99px;background:var(--bg2);border:1px solid var(--bd)}
.q{margin:6px 0;font-size:15px;white-space:pre-wrap}
.box{background:var(--bg2);border-radius:var(--r);padding:6px 8px;margin:6px 0;font-size:13px}
.box ol{margin:4px 0 0;padding-left:18px}.box li{margin:2px 0;white-space:pre-wrap}
.who{font-weight:600}
.acts{display:flex;flex-wrap:wrap;gap:8px;margin-top:8px;align-items:center}
input,textarea{flex:1 1 100%;min-height:36px;padding:6px 8px;border:1px solid var(--bd);border-radius:var(--r);background:var(--bg);color:var(--fg);font:inherit}
fieldset{flex:1 1 100%;margin:0;padding:4px 8px 6px;border:1px solid var(--bd);border-radius:var(--r)}legend{font-size:13px;font-weight:600;padding:0 4px}
fieldset label{display:flex;gap:8px;align-items:center;min-height:30px}fieldset input{flex:none;min-height:0;width:auto;margin:0}
button,a.open{min-height:36px;padding:6px 14px;border-radius:var(--r);border:1px solid var(--bd);background:var(--bg2);color:var(--fg);font:inherit;font-weight:600;cursor:pointer;text-decoration:none;display:inline-flex;align-items:center}
button.yes{background:var(--ok);border-color:var(--ok);color:#fff}
button.no{color:var(--no);border-color:var(--no);background:transparent}
:root[data-theme=dark] button.yes{color:#052e16}
button:disabled{opacity:.5;cursor:default}
.err{color:var(--no);font-size:13px;margin:6px 0 0}
@media (max-width:420px){body{padding:8px}.acts>button,.acts>a.open{flex:1 1 auto;justify-content:center}}
`;

const SCRIPT = `
(function () {
  "use strict";
  var seq = 1, waiting = {}, list = document.getElementById("list"), status = document.getElementById("status"), count = document.getElementById("count");
  function post(m) { window.parent.postMessage(m, "*"); }
  function ask(method, params) {
    var id = seq++;
    post({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (ok, fail) { waiting[id] = { ok: ok, fail: fail }; });
  }
  function notify(method, params) { post({ jsonrpc: "2.0", method: method, params: params || {} }); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function textOf(r) {
    return ((r && r.content) || []).filter(function (c) { return c.type === "text"; }).map(function (c) { return c.text; }).join(" ");
  }
  function say(t) { status.textContent = t; }
  function since(iso) {
    var s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    if (s < 90) return "under 2 min";
    if (s < 5400) return Math.round(s / 60) + " min";
    if (s < 172800) return Math.round(s / 3600) + " h";
    return Math.round(s / 86400) + " days";
  }
  function theme(ctx) {
    if (!ctx) return;
    var root = document.documentElement;
    if (ctx.theme === "light" || ctx.theme === "dark") root.setAttribute("data-theme", ctx.theme);
    var vars = ctx.styles && ctx.styles.variables;
    if (vars) Object.keys(vars).forEach(function (k) {
      if (/^--[a-z0-9-]+$/.test(k) && typeof vars[k] === "string") root.style.setProperty(k, vars[k]);
    });
  }
  // Each result the host sends counts up: a list asked for before the latest one came is not drawn over it.
  var results = 0;
  function refresh() {
    var before = results;
    return ask("tools/call", { name: "list_pending_approvals", arguments: {} }).then(function (r) {
      if (results !== before) return;
      if (r && !r.isError && r.structuredContent && Array.isArray(r.structuredContent.items)) render(r.structuredContent);
      else say(textOf(r) || "The approvals could not be read.");
    }, function (e) { say(e.message); });
  }
  function onResult(r) {
    results++;
    var s = r && r.structuredContent;
    if (s && Array.isArray(s.items)) render(s);
    else refresh();
  }
  function render(s) {
    list.replaceChildren();
    var n = s.items.length;
    count.textContent = n ? n + (s.next_cursor ? "+" : "") + " waiting" : "";
    if (!n) list.append(el("p", "muted", s.can_decide === true ? "Nothing waits for you: no question, sign-off or action is pending." : "Nothing waits for a person."));
    s.items.forEach(function (item) { list.append(card(item, s.can_decide === true)); });
  }
  function card(item, canDecide) {
    var c = el("article", "card"), q = item.kind === "question", act = item.kind === "action" && item.action;
    if (item.task_id) c.setAttribute("data-task", item.task_id);
    if (act) c.setAttribute("data-approval", item.id);
    var top = el("div", "meta");
    top.append(el("span", "kind", act ? "Action" : q ? "Question" : "Sign-off"), " from ", el("span", "who", item.requested_by), " · waiting " + since(item.created_at));
    if (act) {
      c.append(top, el("h2", "", "Run: " + act.title), el("p", "q", act.arguments_in_words));
      if (act.touches && act.touches.length) {
        var ul = el("ul");
        act.touches.forEach(function (t) { ul.append(el("li", "", t.kind.replace("_", " ") + " " + t.name + (t.project_name ? " (in " + t.project_name + ")" : "") + (t.subtasks ? ", with " + t.subtasks + " subtask(s)" : ""))); });
        c.append(el("p", "", "It would touch:"), ul);
      }
      c.append(el("p", "", act.reason + " Expires " + act.expires_at.slice(0, 16).replace("T", " ") + " UTC; nothing runs unless approved."));
    } else {
      c.append(top, el("h2", "", item.task_title), el("p", "q", item.question));
    }
    var run = item.run;
    if (run) {
      var box = el("div", "box");
      box.append(el("span", "who", run.agent), " · its run " + run.status + (run.summary ? ": " : ""), run.summary ? el("span", "", run.summary) : "");
      if (run.events && run.events.length) {
        var ol = el("ol");
        run.events.forEach(function (e) { ol.append(el("li", "", e.kind + ": " + e.message)); });
        box.append(ol);
      }
      c.append(box);
    }
    var note = item.latest_comment;
    if (note) {
      var cm = el("div", "box");
      cm.append(el("span", "who", note.author), ": ", el("span", "", note.body));
      c.append(cm);
    }
    var acts = el("div", "acts"), err = el("p", "err");
    if (canDecide) {
      // A question with choices: one radio button each; one that takes words: a box for them.
      var given = { picks: [], words: null }, asks = q && (item.choices || item.accepts_words);
      if (q && item.choices) {
        var set = el("fieldset");
        set.append(el("legend", "", item.accepts_words ? "Pick one, or answer in words" : "Pick one"));
        item.choices.forEach(function (choice, i) {
          var label = el("label"), radio = el("input");
          radio.type = "radio";
          radio.name = "choice-" + item.id;
          radio.value = choice;
          given.picks.push(radio);
          label.append(radio, el("span", "", choice));
          set.append(label);
        });
        acts.append(set);
      }
      if (q && item.accepts_words) {
        given.words = el("textarea");
        given.words.rows = 2;
        given.words.maxLength = 2000;
        given.words.setAttribute("aria-label", "Your answer in words");
        given.words.placeholder = "Your answer in words";
        acts.append(given.words);
      }
      var why = el("input");
      why.placeholder = q ? "Reason (needed to answer no)" : "Reason (needed to reject)";
      why.setAttribute("aria-label", why.placeholder);
      why.maxLength = 2000;
      var yes = el("button", "yes", asks ? "Send answer" : q ? "Answer yes" : act ? "Approve and run" : "Approve"), no = el("button", "no", q ? "Answer no" : "Reject");
      yes.type = no.type = "button";
      yes.onclick = function () { decide(item, true, why, given, [yes, no], err); };
      no.onclick = function () { decide(item, false, why, given, [yes, no], err); };
      acts.append(why, yes, no);
    }
    if (/^https?:[/][/]/.test(item.decide_url || "")) {
      var a = el("a", "open", "Open in Taskgate");
      a.href = item.decide_url;
      a.target = "_blank";
      a.rel = "noopener";
      a.onclick = function (e) {
        e.preventDefault();
        ask("ui/open-link", { url: item.decide_url }).catch(function () { say(item.decide_url); });
      };
      acts.append(a);
    }
    c.append(acts, err);
    return c;
  }
  function decide(item, yes, why, given, buttons, err) {
    var reason = why.value.trim(), q = item.kind === "question";
    var picked = given.picks.filter(function (r) { return r.checked; })[0], words = given.words ? given.words.value.trim() : "";
    err.textContent = "";
    if (!yes && !reason) { err.textContent = "Say why in the reason first."; why.focus(); return; }
    if (yes && q && item.choices && !picked && !words) {
      err.textContent = item.accepts_words ? "Pick one of the choices, or answer in words, first." : "Pick one of the choices first.";
      given.picks[0].focus();
      return;
    }
    if (yes && q && !item.choices && item.accepts_words && !words) { err.textContent = "Write your answer first."; given.words.focus(); return; }
    var args = item.kind === "action" ? { approval_id: item.id } : { task_id: item.task_id };
    if (yes && reason) args.note = reason;
    if (yes && picked) args.choice = picked.value;
    if (yes && words) args.answer = given.words.value;
    if (!yes) args.reason = reason;
    buttons.forEach(function (b) { b.disabled = true; });
    ask("tools/call", { name: yes ? "approve_task" : "reject_task", arguments: args }).then(function (r) {
      if (r && r.isError) throw new Error(textOf(r) || "Refused.");
      var decided = r && r.structuredContent && r.structuredContent.approval, by = decided && decided.decided_by_person;
      say((q ? (yes ? (picked ? "Answered \u201c" + picked.value + "\u201d: " : words ? "Answered in words: " : "Answered yes: ") : "Answered no: ") : (yes ? "Approved: " : "Rejected: ")) + (item.kind === "action" ? item.action.title : item.task_title) + (by ? " (by " + by.name + ")" : ""));
      return refresh();
    }).catch(function (e) {
      err.textContent = e.message;
      buttons.forEach(function (b) { b.disabled = false; });
    });
  }
  window.addEventListener("message", function (ev) {
    var m = ev.data;
    if (ev.source !== window.parent || !m || m.jsonrpc !== "2.0") return;
    if (!m.method) {
      var w = waiting[m.id];
      if (!w) return;
      delete waiting[m.id];
      if (m.error) w.fail(new Error(m.error.message || "The host refused."));
      else w.ok(m.result);
    } else if (m.method === "ui/notifications/tool-result") onResult(m.params);
    else if (m.method === "ui/notifications/host-context-changed") theme(m.params);
    else if (m.id !== undefined) post({ jsonrpc: "2.0", id: m.id, result: {} });
  });
  if (window.ResizeObserver) new ResizeObserver(function () {
    var r = document.documentElement;
    notify("ui/notifications/size-changed", { width: r.scrollWidth, height: r.scrollHeight });
  }).observe(document.body);
  ask("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "taskgate-approvals", version: "1" }, appCapabilities: {} }).then(function (r) {
    theme(r && r.hostContext);
    notify("ui/notifications/initialized");
    // Opened on its own (no tool call behind it, or a reload): it asks for the list itself, at once when the host names no
    // tool call, else when no result has come shortly after.
    var called = r && r.hostContext && r.hostContext.toolInfo;
    setTimeout(function () { if (!results) refresh(); }, called ? 1500 : 0);
  }, function (e) { say(e.message); });
})();
`;

export const APPROVALS_VIEW_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Taskgate approvals</title><style>${CSS}</style></head>
<body><header><h1>Waiting for a person</h1><span id="count" class="muted"></span></header>
<p id="status" class="muted" role="status" aria-live="polite"></p>
<main id="list"><p class="muted">Loading…</p></main>
<script>${SCRIPT}</script></body></html>
`;
