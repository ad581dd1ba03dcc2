/**
 * Layout measurements for the screenshot test, read from the rendered page
 * (Playwright evaluates them in its own world: the pages themselves run no script).
 */
import type { Locator, Page } from "playwright-core";

/** Elements that reach past the right edge of the viewport (tag, class and how far), outermost first; [] when none. */
export function horizontalOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    if (document.documentElement.scrollWidth > width) out.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.right <= width + 0.5) continue;
      // Inside a box that scrolls or clips on its own, an overflow is that box's business.
      let clipped = false;
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const s = getComputedStyle(p);
        if (s.overflowX !== "visible") clipped = true;
      }
      if (!clipped) out.push(`${el.tagName.toLowerCase()}.${el.className} ends at ${Math.round(r.right)}`);
    }
    return out.slice(0, 5);
  });
}

/** The short names in code on the page (a tool, an event, a scope: one word up to 40 characters) that are broken over lines. */
export function brokenNames(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll("main code"))
      .filter((el) => /^\S{1,40}$/.test(el.textContent ?? ""))
      .filter((el) => new Set(Array.from(el.getClientRects()).map((r) => Math.round(r.top))).size > 1)
      .map((el) => el.textContent ?? ""),
  );
}

/** How many lines an inline element's text takes. */
export function lineCount(el: Locator): Promise<number> {
  return el.evaluate((node) => {
    const tops = new Set(Array.from(node.getClientRects()).map((r) => Math.round(r.top)));
    return tops.size;
  });
}

/** Whether an empty textarea's placeholder is shown whole: laid out at the box's inner width, it fits its height and width. */
export function placeholderFits(box: Locator): Promise<boolean> {
  return box.evaluate((node) => {
    const el = node as HTMLTextAreaElement;
    const s = getComputedStyle(el);
    const probe = document.createElement("div");
    for (const p of ["font", "letterSpacing", "wordSpacing", "paddingTop", "paddingRight", "paddingBottom", "paddingLeft", "lineHeight", "whiteSpace", "overflowWrap"] as const) {
      probe.style[p] = s[p];
    }
    probe.style.whiteSpace = "pre-wrap";
    probe.style.boxSizing = "content-box";
    probe.style.width = `${el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)}px`;
    probe.style.position = "absolute";
    probe.style.visibility = "hidden";
    probe.textContent = el.placeholder;
    document.body.append(probe);
    const fits = probe.offsetHeight <= el.clientHeight + 1;
    probe.remove();
    return fits;
  });
}

/** What makes the header look as it does: the bar, the brand, the sign-out button (null when signed out). */
export interface HeaderLook {
  bar: { background: string; color: string; height: number; paddingLeft: string };
  brand: { font: string; color: string; x: number; y: number; height: number };
  signOut: { font: string; color: string; background: string; border: string; height: number } | null;
}

export function headerLook(page: Page): Promise<HeaderLook> {
  return page.evaluate(() => {
    const bar = document.querySelector("header.top") as HTMLElement;
    const brand = bar.querySelector(".brand") as HTMLElement;
    const button = bar.querySelector("form button") as HTMLElement | null;
    const s = getComputedStyle(bar);
    const b = getComputedStyle(brand);
    const br = brand.getBoundingClientRect();
    // The console's navigation takes its own row on a phone: the bar's first row is what must match.
    const firstRow = Math.round(br.bottom + parseFloat(s.paddingBottom) - bar.getBoundingClientRect().top);
    return {
      bar: { background: s.backgroundColor, color: s.color, height: firstRow, paddingLeft: s.paddingLeft },
      brand: { font: b.font, color: b.color, x: Math.round(br.x), y: Math.round(br.y), height: Math.round(br.height) },
      signOut: button
        ? (() => {
            const t = getComputedStyle(button);
            return { font: t.font, color: t.color, background: t.backgroundColor, border: t.border, height: Math.round(button.getBoundingClientRect().height) };
          })()
        : null,
    };
  });
}

/**
 * The page walked by keyboard alone: Tab from the top until focus comes round
 * again. Returns the visible controls (links, buttons, fields, summaries) that
 * Tab never reached, and those it reached without a visible focus (no outline
 * and no shadow while focused); both [] when every control is usable by
 * keyboard. `max` bounds the walk. The page is left scrolled to the top.
 */
export async function keyboardWalk(page: Page, max = 600): Promise<{ unreached: string[]; unseen: string[]; reached: number }> {
  const total = await page.evaluate(() => {
    const controls = Array.from(document.querySelectorAll<HTMLElement>("a[href],button,input:not([type=hidden]),select,textarea,summary,[tabindex]"))
      .filter((el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled && el.checkVisibility({ visibilityProperty: true }) && !(el.closest("details:not([open])") && el.tagName !== "SUMMARY"));
    controls.forEach((el, i) => el.setAttribute("data-kb", String(i)));
    (document.activeElement as HTMLElement | null)?.blur();
    // Each focus as Tab moves it: which control, and whether its focus shows.
    const log: { kb: number; visible: boolean; what: string }[] = [];
    (window as unknown as { __kb: typeof log }).__kb = log;
    document.addEventListener("focusin", (e) => {
      const el = e.target as HTMLElement;
      const s = getComputedStyle(el);
      const visible = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none";
      const what = `${el.tagName.toLowerCase()} “${(el.getAttribute("aria-label") ?? el.textContent ?? (el as HTMLInputElement).name ?? "").trim().slice(0, 40)}”`;
      log.push({ kb: el.hasAttribute("data-kb") ? Number(el.getAttribute("data-kb")) : -1, visible, what });
    });
    return controls.length;
  });
  // Tab in runs of 25, until a control is focused a second time (the walk came round) or `max`.
  for (let pressed = 0; pressed < max; ) {
    for (let i = 0; i < 25; i++, pressed++) await page.keyboard.press("Tab");
    const round = await page.evaluate(() => {
      const log = (window as unknown as { __kb: { kb: number }[] }).__kb;
      return new Set(log.map((l) => l.kb)).size < log.length;
    });
    if (round) break;
  }
  return page.evaluate((total) => {
    const log = (window as unknown as { __kb: { kb: number; visible: boolean; what: string }[] }).__kb;
    const seen = new Set<number>();
    const unseen: string[] = [];
    for (const l of log) {
      if (seen.has(l.kb)) break;
      seen.add(l.kb);
      if (!l.visible) unseen.push(l.what);
    }
    const reached = (el: Element) => seen.has(Number(el.getAttribute("data-kb")));
    // A radio group is one stop for Tab (its arrows move within it): reached when one of its radios was.
    const groupReached = (el: HTMLElement) => el instanceof HTMLInputElement && el.type === "radio" &&
      Array.from(document.querySelectorAll<HTMLInputElement>("input[type=radio][data-kb]")).some((r) => r.name === el.name && r.form === el.form && reached(r));
    const unreached = Array.from(document.querySelectorAll<HTMLElement>("[data-kb]"))
      .filter((el) => !reached(el) && !groupReached(el))
      .map((el) => `${el.tagName.toLowerCase()} “${(el.getAttribute("aria-label") ?? el.textContent ?? "").trim().slice(0, 40)}”`);
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
    return { unreached: unreached.slice(0, 10), unseen: unseen.slice(0, 10), reached: Math.min(seen.size, total) };
  }, total);
}
