/**
 * A page of a list stops at a byte budget (LIST_MAX_PAGE_BYTES) as well as at its row count: the
 * API answer is cut at the budget row by row once serialised. Reading every row the count allows
 * would still make a service hold all of them (issues of 32,768 characters, 200 to a page) only
 * to send a few, so a page query reads only the rows that may fit, and one more to tell whether
 * another page follows.
 *
 * `page_bytes_before` of a row is the running total of `rowBytes` over the rows before it but the one
 * just before; a row is read while it is below `maxBytes`. That keeps every row whose predecessors
 * together are below the budget, and the first row after them. `rowBytes` (the octets of the
 * row's text columns) must never exceed the row's serialised size, so that no row that fits is
 * left out: JSON escapes text to at least its own bytes. The first two rows are always read.
 */
export interface BoundedPageQuery {
  /** What the query answers, in the table's own column names. */
  columns: string;
  /** The table; the page is read from it under the same name. */
  table: string;
  /** The rows of the list (scope and cursor). */
  where: string;
  /** The list's order, the same for the window and the answer. */
  orderBy: string;
  /** The row count bound, a placeholder or literal. */
  limit: string;
  /** SQL for a lower bound of a row's size once serialised, in bytes. */
  rowBytes: string;
  /** The byte budget, a placeholder for a bigint or NULL for none. */
  maxBytes: string;
}

export function boundedPageQuery(query: BoundedPageQuery): string {
  const { columns, table, where, orderBy, limit, rowBytes, maxBytes } = query;
  const bytesBefore = `coalesce(sum(${rowBytes}) OVER (ORDER BY ${orderBy} ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING), 0)`;
  return `SELECT ${columns} FROM (
      SELECT *, ${bytesBefore} AS page_bytes_before FROM ${table} WHERE ${where} ORDER BY ${orderBy} LIMIT ${limit}
    ) AS ${table}
    WHERE ${maxBytes}::bigint IS NULL OR page_bytes_before < ${maxBytes}::bigint
    ORDER BY ${orderBy}`;
}
