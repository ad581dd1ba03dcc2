import type { TaskgateEvent } from "../domain/events.ts";
import type { Env } from "../env.ts";

/**
 * Puts events on the webhook queue. Call it only after the write that caused
 * them has committed (the registry does so for `Write.events`). A Worker
 * without the queue binding sends nothing; a failure to enqueue is logged
 * with the event ids and never undoes or fails the write.
 */
export async function enqueueEvents(env: Env, events: TaskgateEvent[]): Promise<void> {
  const queue = env.WEBHOOK_QUEUE;
  if (!queue || events.length === 0) return;
  try {
    for (let i = 0; i < events.length; i += 100) {
      await queue.sendBatch(events.slice(i, i + 100).map((body) => ({ body, contentType: "json" as const })));
    }
  } catch (e) {
    console.error(JSON.stringify({ level: "error", where: "enqueueEvents", events: events.map((e) => `${e.type} ${e.id}`), error: String(e) }));
  }
}
