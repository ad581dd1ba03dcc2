import type { Target } from "./lib/d1.ts";

/** `connect --account ID --provider drive|slack|notion --credentials-file F`: stores encrypted app credentials. */
export async function connectCommand(_values: Record<string, string | boolean | undefined>, _target: Target): Promise<unknown> {
  throw new Error("connect is not available yet");
}
