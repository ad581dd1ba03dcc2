/**
 * The one interface every connected app implements. Ids are the provider's
 * own (`provider:id` is a ref); text is plain text, never markup the caller
 * must decode.
 */
export interface DriveCredentials {
  client_id: string;
  client_secret: string;
  refresh_token: string;
}

export interface TokenCredentials {
  token: string;
}

export type Credentials = DriveCredentials | TokenCredentials;

export interface SearchHit {
  id: string;
  title: string;
  snippet: string | null;
  url: string | null;
  updatedAt: string | null;
}

export interface ReadResult {
  title: string;
  url: string | null;
  /** At least `wantChars` characters when the source has them, possibly more. */
  text: string;
  /** Whether `text` is the whole source. */
  complete: boolean;
  /** The source's full length in characters, when known without reading it all. */
  length: number | null;
}

export interface SaveResult {
  id: string;
  url: string | null;
}

export interface Connector {
  search(query: string, limit: number): Promise<SearchHit[]>;
  read(id: string, wantChars: number): Promise<ReadResult>;
  save(title: string, content: string, target: string | undefined): Promise<SaveResult>;
}

/** What an adapter knows about the connection it serves. */
export interface ConnectionInfo {
  connectorId: string;
  accountId: string;
  /** Changes whenever the credentials are replaced; cached access tokens are keyed by it. */
  version: string;
}

/** Per-provider checks of ids and save targets, before any upstream call. A string is the error. */
export interface IdRules {
  checkId(id: string): string | null;
  /** The normalised target, or an error message. */
  checkTarget(target: string | undefined): { target: string | undefined } | { error: string };
}
