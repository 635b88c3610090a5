/** An agent's schedule (issue 16 §3); timestamps are D3 strings, UTC. */
export interface SchedulesTable {
  id: string;
  agent_id: string;
  /** Who made it: a fire starts the thread for this user. */
  user_id: string;
  /** Unique per agent; the name of its `schedule` component in the agent's manifest. */
  name: string;
  cron: string;
  /** An IANA time zone the cron expression is read in. */
  time_zone: string;
  input: string;
  /** 1 or 0. */
  enabled: number;
  created_at: string;
  updated_at: string;
  /** The next due time; a node claims a fire by moving it on from the value it read. */
  next_run_at: string;
  last_run_at: string | null;
  last_thread_id: string | null;
}
