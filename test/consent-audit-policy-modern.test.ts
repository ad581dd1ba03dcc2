import { policyAudit } from "./audit/policy-suite.ts";

// The consent audit's policy situations (allow, ask, deny) through the 2026-07-28 client.
policyAudit("modern");
