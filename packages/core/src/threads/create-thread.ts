import {
  type CreateThreadBody,
  type MachineKind,
  type MessageInput,
  newId,
  timestamp,
} from '@paddock/protocol';
import { appendEvents } from '@paddock/runtime';
import { findDefaultTeamId, findTeamOrgId, insertThread } from '@paddock/store';
import { resolveAgent } from '../agents/resolve-agent.ts';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { admitSandbox } from '../machines/live-sandboxes.ts';
import { resolveSkills } from '../skills/resolve-skills.ts';
import { ensureQueuedTurn, queueInput } from './queue-input.ts';
import { newThreadStatus } from './thread-status.ts';
import { deriveThreadTitle } from './thread-title.ts';

export interface ThreadHandle {
  thread_id: string;
  agent_id: string;
  status: 'running' | 'idle';
}

/**
 * `POST /v2/threads`: reuses or creates the agent, creates the thread and, with a first input,
 * queues its first turn, all in one transaction.
 */
export async function createThread(
  ctx: Ctx,
  services: Pick<Services, 'providers' | 'secrets' | 'network' | 'sandboxLimits' | 'turnQueue' | 'turnTrace'>,
  { input }: { input: CreateThreadBody },
): Promise<ThreadHandle> {
  const messages: MessageInput[] = input.input
    ? [{ role: 'user', content: input.input }]
    : (input.messages ?? []);
  const binding = ctx.actor.credential.binding;
  // A sandbox's own token must not fan out into new threads; an agent key may start its agent's.
  if (binding.type === 'thread')
    throw new PaddockError('forbidden', 'a thread-bound token cannot create threads');
  const existing = input.agent_id ? await reachableAgent(ctx.store.db, ctx.actor, input.agent_id) : undefined;
  if (!existing && binding.type !== 'user') {
    throw new PaddockError('forbidden', 'an agent-bound token can only start threads of its own agent');
  }
  const teamId = existing?.team_id ?? (await findDefaultTeamId(ctx.store.db, ctx.actor.userId));
  if (!teamId) throw new PaddockError('forbidden', 'the caller belongs to no team');

  const handle = await ctx.store.transaction(async (trx) => {
    const agent = existing ?? (await resolveAgent(ctx, services, trx, teamId, input.agent!));
    // Every new thread is refused at the limit; one with an input counts from now (its turn queued).
    await admitSandbox(
      trx,
      services.sandboxLimits,
      { team_id: agent.team_id },
      agent.machine_kind as MachineKind,
    );
    // D14: unpinned registry skills take their newest version now, for the thread's whole life.
    const orgId = (await findTeamOrgId(trx, agent.team_id)) ?? '';
    const skills = await resolveSkills(trx, orgId, JSON.parse(agent.skills));
    const at = timestamp(new Date(ctx.clock.now()));
    const thread = {
      id: newId(),
      agent_id: agent.id,
      team_id: agent.team_id,
      owner_user_id: ctx.actor.userId,
      title: input.title ?? deriveThreadTitle(messages.find((m) => m.role === 'user')?.content),
      status: newThreadStatus(messages.length > 0),
      metadata: JSON.stringify(input.metadata ?? {}),
      group_id: input.group_id ?? null,
      generation: 0,
      last_seq: 0,
      last_position: 0,
      last_input_sequence: 0,
      recovery_state: null,
      replacement_task_id: null,
      machine_expires_at: null,
      machine_id: null,
      skills: JSON.stringify(skills),
      created_at: at,
      updated_at: at,
    };
    await insertThread(trx, thread);
    if (skills.length > 0)
      await appendEvents(trx, thread.id, null, [{ type: 'skills.resolved', data: { skills } }]);
    if (messages.length > 0) {
      await queueInput(trx, thread, messages, at, { run: true });
      await ensureQueuedTurn(trx, thread, at);
    }
    return { thread_id: thread.id, agent_id: agent.id, status: thread.status };
  });
  if (handle.status === 'running') {
    services.turnTrace.mark(handle.thread_id, 'input_stored');
    services.turnQueue.wake(handle.thread_id);
  }
  return handle;
}
