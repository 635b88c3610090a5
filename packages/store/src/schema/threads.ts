import type { Generated } from 'kysely';

export interface ThreadsTable {
  id: string;
  agent_id: string;
  team_id: string;
  owner_user_id: string;
  title: string;
  status: string;
  metadata: string;
  group_id: string | null;
  generation: Generated<number>;
  last_seq: Generated<number>;
  last_position: Generated<number>;
  last_input_sequence: Generated<number>;
  /** Operator recovery (spec: Stop errors): `quarantined` or `retired`; null while the task is usable. */
  recovery_state: string | null;
  /** Where a task under recovery continues, when the operator named one. */
  replacement_task_id: string | null;
  /** When the thread's sandbox ends for good (a provider with a lifetime); set at its first boot. */
  machine_expires_at: string | null;
  /** JSON: the registry skills' versions resolved when the thread was created (D14). */
  skills: Generated<string>;
  /** The machine holding the thread's workspace (a node's id, or a detached runner's); see `machines`. */
  machine_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A thread's sandbox that a host runs, or boots, and vouches for until `live_until`. */
export interface LiveSandboxesTable {
  thread_id: string;
  live_until: string;
  /** The running sandbox: a new id each boot; null while a boot is under way. */
  sandbox_id: string | null;
  /** The machine it runs on: the server node's id (in-process sandboxes) or the runner's. */
  machine_id: string | null;
}

export interface MessagesTable {
  id: string;
  thread_id: string;
  position: number;
  role: string;
  content: string;
  parts: string | null;
  metadata: string;
  turn_id: string | null;
  created_at: string;
}

export interface InputsTable {
  id: string;
  thread_id: string;
  status: string;
  reason: string | null;
  turn_id: string | null;
  generation: number;
  sequence: number;
  messages: string;
  /** 1 when the input asks for a turn; 0 for messages kept without `run` until the next turn. */
  run: Generated<number>;
  /** A task input's `model_options` as given (JSON); null without. */
  model_options: string | null;
  created_at: string;
  updated_at: string;
}

export interface TurnsTable {
  id: string;
  thread_id: string;
  status: string;
  generation: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
  cancel_requested: Generated<number>;
  /** `running`, or `finalizing` once the result is back and the settle has not committed yet. */
  phase: Generated<string>;
  /** 0 when the runtime reported, as the turn started, that it cannot interrupt it safely. */
  interruptible: Generated<number>;
  stop_reason: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  /** The detached runner holding the turn; null for the server's in-process runner. */
  runner_id: string | null;
  /** Index of the last event from the runner that is stored (detached runners). */
  event_cursor: number | null;
}

export interface EventsTable {
  id: string;
  thread_id: string;
  seq: number;
  type: string;
  turn_id: string | null;
  tool_id: string | null;
  data: string;
  ts: string;
}

/**
 * How a node reaches a machine: it is the node (its own runner, Docker engine, micro-VMs), or a
 * deployment's detached runner, or a user's self-hosted runner (which hosts its own agent only).
 */
export type MachineReach = 'node' | 'runner' | 'self_hosted';

/** A machine (a node's own runner, a detached runner) and the node it is reachable through now. */
export interface MachinesTable {
  machine_id: string;
  kind: MachineReach;
  node_id: string;
  /** The node's own address, where the other nodes forward a request for one of its threads. */
  node_url: string;
  /** The node renews it while it lives; after this, the machine counts as gone. */
  seen_until: string;
}
