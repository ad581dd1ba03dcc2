import { HUMAN_TOOLS, WRITE_TOOLS, type ToolName } from "../../src/catalog/effects.ts";
import { fakeConnectedApps, type Seen } from "../connectors-fakes.ts";
import { connect, createToken, seedAccount, type SeededAccount, type TestClient, type ToolCallResult } from "../helpers.ts";
import { diff, snapshotAccount, type Change } from "./observe.ts";

/** Who makes a call: the person, the agent `bot`, or a second agent `rival`. */
export type Actor = "person" | "agent" | "rival";
export const RIVAL = "rival";

/** An account with a person and two agents, each connected through a real MCP client. */
export interface World {
  acc: SeededAccount;
  person: TestClient;
  agent: TestClient;
  rival: TestClient;
  /** The person's read-only token. */
  reader: TestClient;
  ids: Record<string, string>;
}

/**
 * One path a tool can take: `setup` builds the state through the tools and
 * returns the call's arguments. A path with `refusal` is a state the tool
 * refuses (its message must match): refused twice, changing nothing.
 */
export interface Path {
  name: string;
  by: Actor;
  setup(w: World): Promise<Record<string, unknown>>;
  refusal?: RegExp;
}

export type Scenarios = Partial<Record<ToolName, Path[]>>;

export interface CallObservation {
  isError: boolean;
  text: string;
  structured: Record<string, unknown>;
  changes: Change[];
  fetches: number;
}

export interface PathObservation {
  path: string;
  by: Actor;
  args: Record<string, unknown>;
  refusal?: RegExp;
  first: CallObservation;
  repeat: CallObservation;
  /** The same call by an agent (human-only tools) and by a read token (writes), before the path's own. */
  refusedTo: { who: string; call: CallObservation }[];
}

let seen: Seen[] | undefined;

/** Connected apps answer at the fetch boundary; every outbound request is counted. */
export function fakeOutbound(): void {
  seen = fakeConnectedApps();
}

export async function openWorld(): Promise<World> {
  const acc = await seedAccount("Audit account", "bot");
  const rival = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: RIVAL });
  const [person, agent, rivalClient, reader] = await Promise.all([
    connect(acc.human),
    connect(acc.agent),
    connect(rival.secret, "legacy"),
    connect(acc.humanRead, "legacy"),
  ]);
  return { acc, person, agent, rival: rivalClient, reader, ids: {} };
}

export async function closeWorld(w: World): Promise<void> {
  await Promise.all([w.person.close(), w.agent.close(), w.rival.close(), w.reader.close()]);
}

export const clientOf = (w: World, by: Actor): TestClient => (by === "person" ? w.person : by === "agent" ? w.agent : w.rival);

async function observeCall(w: World, client: TestClient, tool: ToolName, args: Record<string, unknown>): Promise<CallObservation> {
  const before = await snapshotAccount(w.acc.accountId);
  const sent = seen?.length ?? 0;
  let r: ToolCallResult;
  try {
    r = await client.call(tool, args);
  } catch (e) {
    // A JSON-RPC error (a refusal outside the tool's result) is a refusal all the same.
    r = { isError: true, text: String((e as Error).message ?? e), structured: {}, meta: {} };
  }
  const fetches = (seen?.length ?? 0) - sent;
  const after = await snapshotAccount(w.acc.accountId);
  return { isError: r.isError, text: r.text, structured: r.structured, changes: diff(before, after), fetches };
}

/** Builds the path's state, then observes the refusals that apply, the call, and the same call again. */
export async function observePath(w: World, tool: ToolName, path: Path): Promise<PathObservation> {
  const args = await path.setup(w);
  const refusedTo: PathObservation["refusedTo"] = [];
  if (HUMAN_TOOLS.has(tool)) refusedTo.push({ who: "an agent", call: await observeCall(w, w.agent, tool, args) });
  if (WRITE_TOOLS.has(tool)) refusedTo.push({ who: "a read token", call: await observeCall(w, w.reader, tool, args) });
  const client = clientOf(w, path.by);
  const first = await observeCall(w, client, tool, args);
  const repeat = await observeCall(w, client, tool, args);
  return { path: path.name, by: path.by, args, refusal: path.refusal, first, repeat, refusedTo };
}
