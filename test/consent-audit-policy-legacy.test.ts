import { policyAudit } from "./audit/policy-suite.ts";

// The consent audit's policy situations (allow, ask, deny) through the 1.x client, as many hosts still connect.
policyAudit("legacy");
