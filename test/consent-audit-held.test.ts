import { consentAudit } from "./audit/consent-suite.ts";

// The consent audit (C1–C5 of docs/approvals-and-claims.md) in the states a task is held in.
consentAudit(["claimed", "awaiting_signoff", "pending_question", "blocked"], { checkPublished: true });
