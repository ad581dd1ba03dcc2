/**
 * Connecting the real SDK clients with OAuth, as a host does that knows only
 * the URL: each SDK's own OAuth client support (discovery from the 401,
 * dynamic client registration, PKCE S256, the code exchange) runs against
 * `wrangler dev`, and the browser step it asks for (sign-in and consent on
 * Taskgate's pages) is done in Chromium by Playwright.
 */
import { randomBytes } from "node:crypto";
import { UnauthorizedError } from "@modelcontextprotocol/client";
import { UnauthorizedError as LegacyUnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { connect, type Era, type McpSession } from "./e2e-harness.ts";

export interface BrowserStep {
  clientName: string;
  redirectUri: string;
  /** Opens the authorization URL in the person's browser; returns the redirect it landed on. */
  authorize: (authorizationUrl: URL) => Promise<URL>;
}

/**
 * The part of an OAuthClientProvider both SDKs call, kept in memory. The
 * authorization step is `authorize`: it gets the URL the SDK would open in the
 * person's browser and returns the redirect the browser landed on.
 */
export class BrowserOAuthProvider {
  private info: Record<string, unknown> | undefined;
  private saved: Record<string, unknown> | undefined;
  private verifier = "";
  private sentState = "";
  private discovery: unknown;
  /** The authorization URL the SDK asked to open, and the redirect the browser came back with. */
  authorizationUrl: URL | undefined;
  callback: URL | undefined;

  private readonly o: BrowserStep;

  constructor(o: BrowserStep) {
    this.o = o;
  }

  get redirectUrl(): string {
    return this.o.redirectUri;
  }

  get clientMetadata() {
    return {
      client_name: this.o.clientName,
      redirect_uris: [this.o.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state(): string {
    this.sentState = randomBytes(16).toString("base64url");
    return this.sentState;
  }

  clientInformation(): any {
    return this.info;
  }

  saveClientInformation(info: any): void {
    this.info = info;
  }

  tokens(): any {
    return this.saved;
  }

  saveTokens(tokens: any): void {
    this.saved = tokens;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizationUrl = url;
    this.callback = await this.o.authorize(url);
  }

  /** Where discovery led (the 2.x SDK checks at the callback that the code goes back to the same authorization server). */
  saveDiscoveryState(state: any): void {
    this.discovery = state;
  }

  discoveryState(): any {
    return this.discovery;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** The registered client id (after dynamic registration). */
  get clientId(): string | undefined {
    return this.info?.client_id as string | undefined;
  }

  /** The access token the SDK holds now. */
  get accessToken(): string | undefined {
    return this.saved?.access_token as string | undefined;
  }

  /** The callback's parameters, once its state is the one this client sent and it carries a code. */
  callbackParams(): URLSearchParams {
    const cb = this.callback;
    if (!cb) throw new Error("the browser step did not come back to the redirect URI");
    const params = cb.searchParams;
    if (params.get("state") !== this.sentState) throw new Error(`the callback's state ${params.get("state")} is not the one sent`);
    if (!params.get("code")) throw new Error(`the callback has no code (error=${params.get("error")}: ${params.get("error_description")})`);
    return params;
  }
}

/**
 * Connects with OAuth the way a host does: the first connect gets the 401,
 * the SDK discovers, registers and sends the person to the browser step, then
 * throws UnauthorizedError; the code from the callback is exchanged with the
 * transport's finishAuth, and a second connect works with the tokens.
 */
export async function connectWithOAuth(url: string, era: Era, provider: BrowserOAuthProvider): Promise<McpSession> {
  if (era === "modern") {
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider as any });
    const client = new Client({ name: "taskgate-e2e-oauth", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await expectUnauthorized(client.connect(transport), (e) => e instanceof UnauthorizedError);
    await transport.finishAuth(provider.callbackParams());
    await client.close().catch(() => {});
  } else {
    const transport = new LegacyTransport(new URL(url), { authProvider: provider as any });
    const client = new LegacyClient({ name: "taskgate-e2e-oauth-legacy", version: "1.0.0" });
    await expectUnauthorized(client.connect(transport), (e) => e instanceof LegacyUnauthorizedError);
    await transport.finishAuth(provider.callbackParams().get("code") as string);
    await client.close().catch(() => {});
  }
  if (!provider.accessToken) throw new Error("the SDK holds no access token after finishAuth");
  return connect(url, { authProvider: provider }, era);
}

async function expectUnauthorized(attempt: Promise<unknown>, isUnauthorized: (e: unknown) => boolean): Promise<void> {
  try {
    await attempt;
  } catch (e) {
    if (isUnauthorized(e)) return;
    throw e;
  }
  throw new Error("the client connected without authorization");
}
