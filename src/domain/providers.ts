/** The apps an account can connect (src/connectors has one adapter for each), and the names people know them by. */
export const PROVIDERS = ["drive", "slack", "notion"] as const;
export type Provider = (typeof PROVIDERS)[number];

export const PROVIDER_NAMES: Record<Provider, string> = {
  drive: "Google Drive",
  slack: "Slack",
  notion: "Notion",
};
