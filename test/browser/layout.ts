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
