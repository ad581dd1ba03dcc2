const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** Prefixed random ids (`tsk_…`, `prj_…`): 16 base-36 characters, never sequential. */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let out = prefix + "_";
  for (const b of bytes) out += ALPHABET[b % 36];
  return out;
}

export const ID_PREFIX = {
  account: "acc",
  agent: "agt",
  token: "tok",
  project: "prj",
  task: "tsk",
  step: "stp",
  comment: "cmt",
  label: "lbl",
  run: "run",
  runEvent: "evt",
  approval: "apr",
  calendarLink: "cal",
  connector: "con",
  trash: "trs",
  activity: "act",
  series: "ser",
  webhook: "whk",
  webhookEvent: "wev",
  delivery: "dlv",
  person: "per",
  pushSubscription: "psh",
} as const;
