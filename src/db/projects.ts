import { notFound } from "../domain/errors.ts";

export interface ProjectRow {
  id: string;
  name: string;
  description: string;
  default_auto_ok: number | null;
  archived_at: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export const PROJECT_COLUMNS = "p.id, p.name, p.description, p.default_auto_ok, p.archived_at, p.version, p.created_at, p.updated_at";

export async function findProject(db: D1Database, accountId: string, id: string): Promise<ProjectRow | null> {
  return db
    .prepare(`SELECT ${PROJECT_COLUMNS} FROM projects p WHERE p.id = ? AND p.account_id = ? AND p.trash_id IS NULL`)
    .bind(id, accountId)
    .first<ProjectRow>();
}

/** A live project of this account, or a not-found error that says how to find ids. */
export async function requireProject(db: D1Database, accountId: string, id: string): Promise<ProjectRow> {
  const row = await findProject(db, accountId, id);
  if (!row) throw notFound("project", id, "list_projects finds project ids");
  return row;
}
