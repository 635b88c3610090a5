import type { Thread, ThreadStatus } from '@paddock/protocol';
import type { ThreadRow } from '@paddock/store';

export function toThread(row: ThreadRow): Thread {
  return {
    id: row.id,
    agent_id: row.agent_id,
    title: row.title,
    status: row.status as ThreadStatus,
    created_at: row.created_at,
    updated_at: row.updated_at,
    generation: row.generation,
    metadata: JSON.parse(row.metadata),
    group_id: row.group_id,
  };
}
