import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

const writeKinds = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);

/**
 * Counts the writes that name any of `tables` (an insert, update, delete or merge naming one
 * anywhere in it), made through the Kysely instance it is a plugin of. A cache of rows read from
 * those tables holds while the count is the one read before the rows were: each write counts as it
 * is sent and again once it has run, so a read that ran before the write commits is never taken
 * for one after it. Only a database this process alone writes (SQLite here) can be watched so.
 */
export class WriteCount implements KyselyPlugin {
  readonly #tables: ReadonlySet<string>;
  readonly #writes = new WeakSet<object>();
  #count = 0;

  constructor(tables: Iterable<string>) {
    this.#tables = new Set(tables);
  }

  get count(): number {
    return this.#count;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (writeKinds.has(args.node.kind) && namesTable(args.node, this.#tables)) {
      this.#count++;
      this.#writes.add(args.queryId);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.#writes.has(args.queryId)) this.#count++;
    return args.result;
  }
}

/** Whether a `TableNode` of one of `tables` is anywhere in the node's tree. */
function namesTable(node: unknown, tables: ReadonlySet<string>): boolean {
  if (Array.isArray(node)) return node.some((child) => namesTable(child, tables));
  if (typeof node !== 'object' || node === null) return false;
  const record = node as { kind?: unknown; table?: { identifier?: { name?: unknown } } };
  if (record.kind === 'TableNode' && tables.has(String(record.table?.identifier?.name))) return true;
  return Object.values(node).some((child) => namesTable(child, tables));
}
