/** The scope overlap rule of src/domain/scopes.ts in SQL, as the claim batches run it. */

/**
 * The rule in SQL: some area of the scope column `xs` overlaps some area of
 * `ys` (two column expressions, e.g. `t.scope`, `h.scope`). No binds.
 */
export function overlapSql(xs: string, ys: string): string {
  const f = (side: string, key: string) => `json_extract(${side}.value, '$.${key}')`;
  const [xk, xp, xg, xsl] = ["k", "p", "g", "s"].map((k) => f("x", k));
  const [yk, yp, yg, ysl] = ["k", "p", "g", "s"].map((k) => f("y", k));
  const under = (a: string, folder: string) => `(${a} = ${folder} OR substr(${a}, 1, length(${folder}) + 1) = ${folder} || '/')`;
  const starts = (a: string, prefix: string) => `substr(${a}, 1, length(${prefix})) = ${prefix}`;
  const path = (a: [string, string, string, string], b: [string, string, string, string]) =>
    `(${a[0]} = 'p' AND (${under(b[1], a[1])} OR (${b[0]} = 'p' AND ${under(a[1], b[1])})
      OR (${b[0]} = 'g' AND ${starts(a[1], b[1])} AND ${a[1]} GLOB ${b[2]} AND (${b[3]} < 0 OR ${a[3]} = ${b[3]}))))`;
  const X: [string, string, string, string] = [xk, xp, xg, xsl];
  const Y: [string, string, string, string] = [yk, yp, yg, ysl];
  return `EXISTS (SELECT 1 FROM json_each(${xs}) x, json_each(${ys}) y WHERE
    (${xk} = 'n' AND ${yk} = 'n' AND ${xp} = ${yp})
    OR (${xk} <> 'n' AND ${yk} <> 'n' AND (${path(X, Y)} OR ${path(Y, X)}
      OR (${xk} = 'g' AND ${yk} = 'g' AND (${starts(xp, yp)} OR ${starts(yp, xp)})))))`;
}
