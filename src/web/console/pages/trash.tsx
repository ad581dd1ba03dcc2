import type { FC } from "hono/jsx";
import type { TrashPage as Data } from "../../../db/console.ts";
import { actorWord, clip, plural } from "../format.ts";
import { Act, AskFirst, Button, Empty, Shell, When, Written, type View } from "../ui.tsx";

export const TrashPage: FC<{ view: View; data: Data; nextCursor: string | null }> = ({ view, data, nextCursor }) => (
  <Shell view={view} section="trash" title="Trash">
    <h1>Trash</h1>
    <p class="muted">
      Deleted tasks, projects, steps and comments stay here for {plural(data.settings.trash_retention_days, "day")} (Settings), then they are purged for good.
      Restore puts an item back exactly as it was.
    </p>
    {data.items.length === 0 ? (
      <Empty>The trash is empty.</Empty>
    ) : (
      <>
        <div class="table">
          <table class="stack">
            <thead>
              <tr><th scope="col">What</th><th scope="col">Deleted</th><th scope="col">Purged</th><th scope="col"><span class="sr">Actions</span></th></tr>
            </thead>
            <tbody>
              {data.items.map((i) => (
                <tr id={i.id}>
                  <td data-label="What">
                    <span class="badge">{i.kind}</span> <Written text={i.title} max={200} />
                    {i.item_count > 1 ? <div class="hint">{plural(i.item_count, "row")} deleted together</div> : null}
                  </td>
                  <td data-label="Deleted"><When view={view} iso={i.deleted_at} /> by {actorWord(i.deleted_by)}</td>
                  <td data-label="Purged"><When view={view} iso={i.purge_after} /></td>
                  <td>
                    <div class="actions">
                      <Act view={view} action="restore" fields={{ item_id: i.id }}><Button kind="primary" label={`Restore ${clip(i.title, 60).text}`}>Restore</Button></Act>
                      <AskFirst view={view} action="purge" fields={{ item_id: i.id }}><Button kind="danger" label={`Delete forever ${clip(i.title, 60).text}`}>Delete forever</Button></AskFirst>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {nextCursor ? <nav class="pager" aria-label="More"><a class="button" href={`/trash?cursor=${encodeURIComponent(nextCursor)}`}>More</a></nav> : null}
        <section class="card" aria-labelledby="h-empty">
          <h2 id="h-empty">Empty the trash</h2>
          <p class="hint">Purges everything in the trash now. This cannot be undone; the next page says how much goes, and asks you to confirm.</p>
          <AskFirst view={view} action="empty" label="Empty the trash">
            <div class="actions"><Button kind="danger">Empty the trash</Button></div>
          </AskFirst>
        </section>
      </>
    )}
  </Shell>
);
