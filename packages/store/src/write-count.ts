import {
  AliasNode,
  DeleteQueryNode,
  InsertQueryNode,
  type KyselyPlugin,
  MergeQueryNode,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  TableNode,
  type UnknownRow,
  UpdateQueryNode,
} from 'kysely';

/**
 * Counts the writes to any of `tables` (an insert, update, delete or merge whose target is one),
 * made through the Kysely instance it is a plugin of. A cache of rows read from those tables holds
 * while the count is the one read before the rows were: each write counts as it is sent and again
 * once it has run, so a read that ran before the write commits is never taken for one after it.
 * Writes by another connection are not seen here (`Store.credentialVersion` adds SQLite's own
 * `data_version` for them).
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
    if (writeTargets(args.node).some((target) => this.#tables.has(tableName(target) ?? ''))) {
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

/** The tables a statement writes (only its targets: a batch insert's values are not walked). */
function writeTargets(node: RootOperationNode): readonly OperationNode[] {
  if (InsertQueryNode.is(node)) return node.into ? [node.into] : [];
  if (UpdateQueryNode.is(node)) return node.table ? [node.table] : [];
  if (DeleteQueryNode.is(node)) return node.from.froms;
  if (MergeQueryNode.is(node)) return [node.into];
  return [];
}

function tableName(node: OperationNode): string | undefined {
  if (TableNode.is(node)) return node.table.identifier.name;
  if (AliasNode.is(node)) return tableName(node.node);
  return undefined;
}
