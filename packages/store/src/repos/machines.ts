import type { MachineReach } from '../schema.ts';
import type { Db } from '../store.ts';

/** A node and the machines it reaches: itself (the node's id) and the runners connected to it. */
export interface NodePresence {
  nodeId: string;
  nodeUrl: string;
  machines: readonly { id: string; kind: MachineReach }[];
}

/**
 * Says the node reaches these machines until `until`; a machine that moved to this node (a runner
 * reconnected here) becomes this node's. The node's other machines (runners that left) are dropped.
 */
export async function announceMachines(db: Db, presence: NodePresence, until: string): Promise<void> {
  const { nodeId, nodeUrl, machines } = presence;
  let drop = db.deleteFrom('machines').where('node_id', '=', nodeId);
  if (machines.length > 0)
    drop = drop.where(
      'machine_id',
      'not in',
      machines.map((machine) => machine.id),
    );
  await drop.execute();
  if (machines.length === 0) return;
  await db
    .insertInto('machines')
    .values(
      machines.map((machine) => ({
        machine_id: machine.id,
        kind: machine.kind,
        node_id: nodeId,
        node_url: nodeUrl,
        seen_until: until,
      })),
    )
    .onConflict((oc) =>
      oc.column('machine_id').doUpdateSet({
        kind: (eb) => eb.ref('excluded.kind'),
        node_id: (eb) => eb.ref('excluded.node_id'),
        node_url: (eb) => eb.ref('excluded.node_url'),
        seen_until: (eb) => eb.ref('excluded.seen_until'),
      }),
    )
    .execute();
}

/** The node is going away: its machines are reachable through it no more. */
export async function withdrawMachines(db: Db, nodeId: string): Promise<void> {
  await db.deleteFrom('machines').where('node_id', '=', nodeId).execute();
}

/**
 * The live node that reaches the thread's machine, when there is one: where its turns run and its
 * workspace requests go. Undefined for a thread without a machine yet, or whose machine is gone.
 */
export async function findThreadHome(
  db: Db,
  threadId: string,
  now: string,
): Promise<{ nodeId: string; nodeUrl: string } | undefined> {
  const row = await db
    .selectFrom('threads as t')
    .innerJoin('machines as m', 'm.machine_id', 't.machine_id')
    .select(['m.node_id', 'm.node_url'])
    .where('t.id', '=', threadId)
    .where('m.seen_until', '>', now)
    .executeTakeFirst();
  return row && { nodeId: row.node_id, nodeUrl: row.node_url };
}

/** Records the machine now holding the thread's workspace. */
export async function setThreadMachine(db: Db, threadId: string, machineId: string): Promise<void> {
  await db
    .updateTable('threads')
    .set({ machine_id: machineId })
    .where('id', '=', threadId)
    .where((eb) => eb.or([eb('machine_id', 'is', null), eb('machine_id', '!=', machineId)]))
    .execute();
}

/** Whether another live node reaches a deployment runner (one that can host any thread). */
export async function runnerElsewhere(db: Db, nodeId: string, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('machines')
    .select('machine_id')
    .where('kind', '=', 'runner')
    .where('node_id', '!=', nodeId)
    .where('seen_until', '>', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
