import type { Target } from "./lib/d1.ts";
import type { Values } from "./lib/cli.ts";

/** `connect --account ID --provider drive|slack|notion --credentials-file F`: stores encrypted app credentials. */
export async function connectCommand(_values: Values, _target: Target): Promise<unknown> {
  throw new Error("connect is not available yet");
}
