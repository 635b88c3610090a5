import { type Db, findAgent, type ThreadRow } from '@paddock/store';
import { PaddockError } from '../errors.ts';

/**
 * A sandbox_e thread's workspace lives on the self-hosted runner's machine, which the server cannot
 * read or write: its file reads and uploads are refused (409 `files_on_remote_runner`, no retry
 * helps) rather than answering the server's empty folder. The agent itself sees its files.
 */
export async function refuseRemoteWorkspace(db: Db, thread: ThreadRow): Promise<void> {
  const agent = await findAgent(db, thread.agent_id);
  if (agent?.machine_kind !== 'sandbox_e') return;
  throw new PaddockError(
    'files_on_remote_runner',
    "this task's files live on its self-hosted runner's machine; the server cannot read or upload them",
  );
}
