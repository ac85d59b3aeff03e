/**
 * Each call's request and answer, read from the generated `operations` by
 * operation id and status: when the document changes, the client's types
 * change with it, and a status it no longer answers fails the build.
 */

import type { operations } from "./generated/schema.js";

type Operation = keyof operations;

/** The JSON body operation `O` takes. */
export type Body<O extends Operation> = operations[O] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? NonNullable<B>
  : never;

/** The query parameters operation `O` takes. */
export type Query<O extends Operation> = operations[O]["parameters"] extends { query?: infer Q }
  ? NonNullable<Q>
  : never;

/** The JSON answer of operation `O` with status `S`. */
export type Answer<O extends Operation, S extends keyof operations[O]["responses"]> = operations[O]["responses"][S] extends {
  content: { "application/json": infer A };
}
  ? A
  : never;

/** One page of a list: the items, and the cursor of the next page (null on the last). */
export interface Page<T> {
  data: T[];
  next_cursor?: string | null;
}

/** A list's query without its cursor: what `listAll` walks with. */
export type Filters<Q> = Omit<Q, "cursor">;
