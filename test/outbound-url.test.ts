import { afterEach, describe, expect, it, vi } from "vitest";
import { send } from "../src/connectors/http.ts";
import { outboundTextProblem, parseV6, PUBLIC_ONLY } from "../src/domain/outbound-url.ts";

const PROD = { webhook: true, local: false } as const;
const DEV = { webhook: true, local: true } as const;

/** Hosts refused everywhere, in the spellings URL parsing accepts, with what the refusal calls them. */
const INTERNAL: [url: string, what: RegExp][] = [
  // loopback, every IPv4 spelling
  ["https://127.0.0.1/x", /127\.0\.0\.1 is a loopback address/],
  ["https://2130706433/x", /127\.0\.0\.1 is a loopback address/],
  ["https://0x7f000001/x", /127\.0\.0\.1 is a loopback address/],
  ["https://0x7F.0.0.1/x", /127\.0\.0\.1 is a loopback address/],
  ["https://0177.0.0.1/x", /127\.0\.0\.1 is a loopback address/],
  ["https://017700000001/x", /127\.0\.0\.1 is a loopback address/],
  ["https://127.1/x", /127\.0\.0\.1 is a loopback address/],
  ["https://127.0.1/x", /127\.0\.0\.1 is a loopback address/],
  ["https://127.0.0.1./x", /127\.0\.0\.1 is a loopback address/],
  ["https://127.255.255.254:8443/x", /loopback address/],
  ["https://%31%32%37.0.0.1/x", /127\.0\.0\.1 is a loopback address/],
  ["https://１２７.０.０.１/x", /127\.0\.0\.1 is a loopback address/],
  // loopback, IPv6 and IPv4 inside IPv6
  ["https://[::1]/x", /\[::1\] is the loopback address/],
  ["https://[0:0:0:0:0:0:0:1]/x", /\[::1\] is the loopback address/],
  ["https://[::ffff:127.0.0.1]/x", /IPv4-mapped address of a loopback address/],
  ["https://[::ffff:7f00:1]/x", /IPv4-mapped address of a loopback address/],
  ["https://[0:0:0:0:0:ffff:7f00:0001]/x", /IPv4-mapped address of a loopback address/],
  ["https://[::127.0.0.1]/x", /IPv4-compatible address of a loopback address/],
  ["https://[64:ff9b::127.0.0.1]/x", /NAT64 address of a loopback address/],
  ["https://[64:ff9b::a00:5]/x", /NAT64 address of a private address/],
  ["https://[2002:7f00:1::]/x", /6to4 address of a loopback address/],
  ["https://[::ffff:0:7f00:1]/x", /IPv4-translated address of a loopback address/],
  // private, link-local, shared, reserved, multicast, unspecified, broadcast
  ["https://10.0.0.5/x", /10\.0\.0\.5 is a private address \(10\.0\.0\.0\/8\)/],
  ["https://167772165/x", /10\.0\.0\.5 is a private address/],
  ["https://172.16.0.1/x", /private address \(172\.16\.0\.0\/12\)/],
  ["https://172.31.255.255/x", /private address \(172\.16\.0\.0\/12\)/],
  ["https://192.168.1.1/x", /private address \(192\.168\.0\.0\/16\)/],
  ["https://0xc0a80101/x", /192\.168\.1\.1 is a private address/],
  ["https://169.254.169.254/latest", /169\.254\.169\.254 is a link-local address/],
  ["https://[::ffff:169.254.169.254]/latest", /IPv4-mapped address of a link-local address/],
  ["https://100.64.0.1/x", /shared \(carrier-grade NAT\) address/],
  ["https://100.127.255.255/x", /shared \(carrier-grade NAT\) address/],
  ["https://0.0.0.0/x", /0\.0\.0\.0 is an unspecified address/],
  ["https://0/x", /0\.0\.0\.0 is an unspecified address/],
  ["https://[::]/x", /\[::\] is the unspecified address/],
  ["https://255.255.255.255/x", /the broadcast address/],
  ["https://224.0.0.1/x", /multicast address \(224\.0\.0\.0\/4\)/],
  ["https://239.255.255.250/x", /multicast address/],
  ["https://240.0.0.1/x", /reserved address \(240\.0\.0\.0\/4\)/],
  ["https://192.0.0.1/x", /reserved protocol address/],
  ["https://198.18.0.1/x", /benchmarking address/],
  ["https://192.0.2.1/x", /documentation address/],
  ["https://[fe80::1]/x", /link-local address \(fe80::\/10\)/],
  ["https://[febf::1]/x", /link-local address \(fe80::\/10\)/],
  ["https://[fc00::1]/x", /unique-local address \(fc00::\/7\)/],
  ["https://[fd12:3456::1]/x", /unique-local address \(fc00::\/7\)/],
  ["https://[ff02::1]/x", /multicast address \(ff00::\/8\)/],
  ["https://[2001:db8::1]/x", /documentation address/],
  ["https://[64:ff9b:1::1]/x", /local-use NAT64/],
  // names internal by convention
  ["https://localhost/x", /localhost is a loopback name/],
  ["https://LOCALHOST:8080/x", /localhost is a loopback name/],
  ["https://localhost./x", /loopback name/],
  ["https://api.localhost/x", /api\.localhost is a loopback name/],
  ["https://printer.local/x", /internal by convention \(\*\.local\)/],
  ["https://metadata.google.internal/x", /internal by convention \(\*\.internal\)/],
  ["https://router.home.arpa/x", /internal by convention \(\*\.home\.arpa\)/],
  ["https://db.localdomain/x", /internal by convention/],
  ["https://nas.lan/x", /internal by convention/],
  ["https://fileserver/x", /single-label name/],
  ["https://wiki.intranet/x", /internal by convention \(\*\.intranet\)/],
  ["https://metadata/x", /single-label name/],
  ["https://receiver./x", /single-label name/],
];

/** Public hosts: allowed everywhere. */
const PUBLIC = [
  "https://hooks.example.com/taskgate",
  "https://8.8.8.8/x",
  "https://134744072/x",
  "https://172.15.255.255/x",
  "https://172.32.0.1/x",
  "https://100.63.255.255/x",
  "https://100.128.0.1/x",
  "https://169.253.1.1/x",
  "https://192.169.0.1/x",
  "https://[2606:4700:4700::1111]/x",
  "https://[::ffff:8.8.8.8]/x",
  "https://[64:ff9b::808:808]/x",
  "https://localhost.example.com/x",
  "https://local.example.com/x",
  "https://internal.example.com/x",
  "https://xn--bcher-kva.example/x",
  "https://hooks.example.test:8443/x",
];

afterEach(() => vi.restoreAllMocks());

describe("the outbound rule: one function decides which URLs the Worker may request", () => {
  it.each(INTERNAL)("refuses %s", (url, what) => {
    const problem = outboundTextProblem(url, PROD);
    expect(problem).toMatch(what);
    expect(problem).toMatch(/Taskgate sends requests only to public hosts/);
  });

  it.each(PUBLIC)("allows %s", (url) => {
    expect(outboundTextProblem(url, PROD)).toBeNull();
    expect(outboundTextProblem(url, DEV)).toBeNull();
  });

  it("local development allows loopback receivers, and nothing else that is internal", () => {
    const loopback = INTERNAL.filter(([, what]) => /loopback (address|name)/.test(what.source) && !/of a loopback/.test(what.source)).map(([u]) => u);
    expect(loopback.length).toBeGreaterThan(10);
    for (const url of loopback) {
      expect(outboundTextProblem(url, DEV), url).toBeNull();
      expect(outboundTextProblem(url, PROD), url).toMatch(/loopback receivers are accepted only in local development/);
    }
    for (const [url] of INTERNAL.filter(([u]) => !loopback.includes(u))) expect(outboundTextProblem(url, DEV), url).not.toBeNull();
    expect(outboundTextProblem("http://127.0.0.1:8787/hook", DEV)).toBeNull();
    expect(outboundTextProblem("http://10.0.0.5/hook", DEV)).toMatch(/private address/);
  });

  it("schemes: https only, http:// too in local development, nothing else; text that is not a URL", () => {
    expect(outboundTextProblem("http://hooks.example.com/x", PROD)).toBe("must start with https:// (http:// is accepted only in local development)");
    expect(outboundTextProblem("http://hooks.example.com/x", DEV)).toBeNull();
    for (const url of ["ftp://hooks.example.com/x", "file:///etc/passwd", "data:text/plain,x", "gopher://hooks.example.com/"]) {
      expect(outboundTextProblem(url, DEV), url).toBe("must start with https:// or http://");
      expect(outboundTextProblem(url, PROD), url).toMatch(/^must start with https:\/\//);
    }
    expect(outboundTextProblem("not a url", PROD)).toBe("is not a URL");
    expect(outboundTextProblem("https://[::1/x", PROD)).toBe("is not a URL");
  });

  it("requests other than webhooks (client metadata documents, the connectors): https to a public host, with no local allowance", () => {
    for (const [url, what] of INTERNAL) {
      const problem = outboundTextProblem(url, PUBLIC_ONLY);
      expect(problem, url).toMatch(what);
      expect(problem, url).not.toMatch(/local development/);
    }
    for (const url of PUBLIC) expect(outboundTextProblem(url, PUBLIC_ONLY), url).toBeNull();
    expect(outboundTextProblem("http://hooks.example.com/x", PUBLIC_ONLY)).toBe("must start with https://");
  });

  it("reads IPv6 in every form the rule meets, and refuses what it cannot read", () => {
    expect(parseV6("::1")).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseV6("::ffff:127.0.0.1")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseV6("2001:db8::")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]);
    expect(parseV6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const bad of ["1::2::3", "1:2:3:4:5:6:7", "12345::", "::ffff:300.0.0.1", "1:2:3:4:5:6:7:8:9", "g::1"]) expect(parseV6(bad), bad).toBeNull();
  });
});

describe("the connectors' one way out goes through the rule", () => {
  it("a request to an internal host is refused as an upstream error, and nothing is fetched", async () => {
    const fetched: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL) => {
      fetched.push(new Request(input).url);
      return new Response("{}");
    });
    for (const url of ["https://169.254.169.254/latest", "https://0x7f000001/api", "http://slack.com/api"]) {
      await expect(send("slack", url, { method: "GET" }), url).rejects.toMatchObject({ code: "upstream", message: expect.stringMatching(/^Slack refused the request \(its address /) });
    }
    expect(fetched).toEqual([]);
    expect((await send("slack", "https://slack.com/api/auth.test", { method: "GET" })).status).toBe(200);
    expect(fetched).toEqual(["https://slack.com/api/auth.test"]);
  });
});
