import { consentAudit } from "./audit/consent-suite.ts";

// The consent audit in a state a person holds, and in states a person decided.
consentAudit(["held_by_person", "approved_by_person", "trashed_by_person", "archived_by_person"]);
