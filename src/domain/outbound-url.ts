/**
 * Whether the Worker may send a request to a URL: the one rule for every
 * outbound request (webhook endpoints when they are registered and again at
 * each delivery, OAuth client metadata documents before the provider fetches
 * them, the connectors). Only public hosts: an IP literal in a loopback,
 * private, link-local, shared (CGNAT), unique-local, multicast, reserved or
 * unspecified range is refused in whatever spelling URL parsing accepts
 * (`new URL()` turns `2130706433`, `0x7f000001`, `0177.0.0.1` and `127.1`
 * into `127.0.0.1`, and IPv6 into its compressed hex form, before the rule
 * reads it), and so is a name that is internal by convention (`localhost`,
 * `*.localhost`, `*.local`, `*.internal`, `*.home.arpa`, …, or a single
 * label). Local development (`ALLOW_HTTP_WEBHOOKS`) may also reach loopback
 * receivers, and nothing else that is internal. The platform's
 * `global_fetch_strictly_public` flag stays underneath as a second layer
 * (it also covers redirects and names that resolve to private addresses).
 */

export type OutboundPolicy =
  /** A webhook receiver: local development (ALLOW_HTTP_WEBHOOKS) may also use `http://` and loopback hosts. */
  | { webhook: true; local: boolean }
  /** Anything else (client metadata documents, the connectors): `https://` to a public host, always. */
  | { webhook: false };

export const PUBLIC_ONLY: OutboundPolicy = { webhook: false };

/** Suffixes of names that only resolve inside a network (RFC 6761, 6762 appendix G, 8375, and ICANN's `.internal`). */
const INTERNAL_SUFFIXES = ["localhost", "local", "internal", "home.arpa", "localdomain", "lan", "home", "corp", "intranet", "private"];

type Range = readonly [base: number, bits: number, what: string];

const ip4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

/** IPv4 ranges that are not the public internet (RFC 6890), most specific first where they nest. */
const V4_RANGES: Range[] = [
  [ip4(255, 255, 255, 255), 32, "the broadcast address"],
  [ip4(0, 0, 0, 0), 8, "an unspecified address (0.0.0.0/8)"],
  [ip4(10, 0, 0, 0), 8, "a private address (10.0.0.0/8)"],
  [ip4(100, 64, 0, 0), 10, "a shared (carrier-grade NAT) address (100.64.0.0/10)"],
  [ip4(127, 0, 0, 0), 8, "a loopback address (127.0.0.0/8)"],
  [ip4(169, 254, 0, 0), 16, "a link-local address (169.254.0.0/16, where cloud metadata services live)"],
  [ip4(172, 16, 0, 0), 12, "a private address (172.16.0.0/12)"],
  [ip4(192, 0, 0, 0), 24, "a reserved protocol address (192.0.0.0/24)"],
  [ip4(192, 0, 2, 0), 24, "a documentation address (192.0.2.0/24)"],
  [ip4(192, 88, 99, 0), 24, "a reserved relay address (192.88.99.0/24)"],
  [ip4(192, 168, 0, 0), 16, "a private address (192.168.0.0/16)"],
  [ip4(198, 18, 0, 0), 15, "a benchmarking address (198.18.0.0/15)"],
  [ip4(198, 51, 100, 0), 24, "a documentation address (198.51.100.0/24)"],
  [ip4(203, 0, 113, 0), 24, "a documentation address (203.0.113.0/24)"],
  [ip4(224, 0, 0, 0), 4, "a multicast address (224.0.0.0/4)"],
  [ip4(240, 0, 0, 0), 4, "a reserved address (240.0.0.0/4)"],
];

function inRange(value: number, base: number, bits: number): boolean {
  if (bits === 0) return true;
  const mask = bits === 32 ? 0xffffffff : (~0 << (32 - bits)) >>> 0;
  return ((value & mask) >>> 0) === base;
}

/** What an IPv4 address is when it is not public, or null. */
function v4Problem(value: number): string | null {
  for (const [base, bits, what] of V4_RANGES) if (inRange(value, base, bits)) return what;
  return null;
}

/** Dotted decimal as URL parsing serializes it, or null. */
function parseV4(text: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? ip4(parts[0], parts[1], parts[2], parts[3]) : null;
}

/** Eight 16-bit groups of an IPv6 address (hex groups, `::`, an optional dotted IPv4 tail), or null. */
export function parseV6(text: string): number[] | null {
  let s = text;
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (dotted) {
    const v4 = parseV4(dotted[1]);
    if (v4 === null || !s.slice(0, -dotted[1].length).endsWith(":")) return null;
    s = `${s.slice(0, -dotted[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  const known = head.length + rest.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  return [...head, ...new Array(8 - known).fill("0"), ...rest].map((g) => parseInt(g, 16));
}

const v4Of = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0;

/** What an IPv6 address is when it is not public, or null; addresses that carry an IPv4 one are judged by it. */
function v6Problem(g: number[]): string | null {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return "the unspecified address (::)";
  if (zeroUpTo(7) && g[7] === 1) return "the loopback address (::1)";
  const embedded = (what: string, v4: number) => {
    const p = v4Problem(v4);
    return p ? `${what} of ${p}` : null;
  };
  if (zeroUpTo(5) && g[5] === 0xffff) return embedded("an IPv4-mapped address", v4Of(g[6], g[7]));
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return embedded("an IPv4-translated address", v4Of(g[6], g[7]));
  if (zeroUpTo(6)) return embedded("an IPv4-compatible address", v4Of(g[6], g[7])) ?? "an IPv4-compatible address (::/96, deprecated)";
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded("a NAT64 address", v4Of(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "a local-use NAT64 address (64:ff9b:1::/48)";
  if (g[0] === 0x2002) return embedded("a 6to4 address", v4Of(g[1], g[2]));
  if (g[0] === 0x100 && zeroUpTo(4)) return "a discard-only address (100::/64)";
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "a documentation address (2001:db8::/32)";
  if ((g[0] & 0xfe00) === 0xfc00) return "a unique-local address (fc00::/7)";
  if ((g[0] & 0xffc0) === 0xfe80) return "a link-local address (fe80::/10)";
  if ((g[0] & 0xffc0) === 0xfec0) return "a site-local address (fec0::/10, deprecated)";
  if ((g[0] & 0xff00) === 0xff00) return "a multicast address (ff00::/8)";
  return null;
}

/** What the host of a parsed URL is when it is not a public host, or null; `loopback` says whether local development may reach it. */
export function hostProblem(hostname: string): { what: string; loopback: boolean } | null {
  if (hostname.startsWith("[")) {
    const groups = parseV6(hostname.slice(1, -1));
    if (!groups) return { what: "an IPv6 address that cannot be read", loopback: false };
    const what = v6Problem(groups);
    return what ? { what, loopback: what.startsWith("the loopback") } : null;
  }
  const v4 = parseV4(hostname);
  if (v4 !== null) {
    const what = v4Problem(v4);
    return what ? { what, loopback: what.startsWith("a loopback") } : null;
  }
  const name = hostname.replace(/\.+$/, "").toLowerCase();
  if (!name) return { what: "an empty host name", loopback: false };
  const suffix = INTERNAL_SUFFIXES.find((s) => name === s || name.endsWith(`.${s}`));
  if (suffix === "localhost") return { what: `a loopback name (${name})`, loopback: true };
  if (suffix) return { what: `a name internal by convention (*.${suffix})`, loopback: false };
  if (!name.includes(".")) return { what: "a single-label name, which resolves only inside a network", loopback: false };
  return null;
}

/**
 * Why the Worker may not send a request to `url` (a sentence to follow the
 * field's name), or null when it may. Any scheme but `https:` is refused,
 * and `http:` too outside local development.
 */
export function outboundProblem(url: URL, policy: OutboundPolicy): string | null {
  const local = policy.webhook && policy.local;
  if (url.protocol !== "https:" && !(local && url.protocol === "http:")) {
    if (!policy.webhook) return "must start with https://";
    return local ? "must start with https:// or http://" : "must start with https:// (http:// is accepted only in local development)";
  }
  const host = hostProblem(url.hostname);
  if (!host || (local && host.loopback)) return null;
  const note = policy.webhook && host.loopback ? " (loopback receivers are accepted only in local development, ALLOW_HTTP_WEBHOOKS)" : "";
  return `${url.hostname} is ${host.what}; Taskgate sends requests only to public hosts${note}`;
}

/** `outboundProblem` for a URL's text: also refuses text that is not a URL. */
export function outboundTextProblem(text: string, policy: OutboundPolicy): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a URL";
  }
  return outboundProblem(url, policy);
}
