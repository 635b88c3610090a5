import type { StopReason, TurnResult } from '@paddock/protocol';
import {
  experimental_createSteering as createSteering,
  type ModelMessage,
  stepCountIs,
  streamText,
} from 'ai';
import { mcpToolSet } from '../mcp/mcp-tool-set.ts';
import type { Outcome } from '../tools/report-outcome.ts';
import { createToolSet } from '../tools/tool-set.ts';
import type { HarnessTurnInput } from '../types.ts';
import { skillCatalog } from './skill-catalog.ts';
import { createTurnRecorder } from './turn-recorder.ts';

export interface AgentLoopOptions {
  systemPrompt: string;
  /** knowledge_cloud runs the same loop without it. */
  shell: boolean;
}

export const maxSteps = 50;

/**
 * One turn of Paddock's own agent, in the runner's process: a model loop whose every tool runs in the
 * sandbox (`input.sandbox`) and whose model calls go where `input.models` says (the router, in the
 * server's own runner).
 */
export async function runAgentLoop(
  input: HarnessTurnInput,
  options: AgentLoopOptions,
): Promise<TurnResult<ModelMessage>> {
  let outcome: Outcome | undefined;
  const skillsDir = input.env.PADDOCK_SKILLS_DIR || undefined;
  const tools = {
    ...(input.mcp ? mcpToolSet(input.mcp, input.signal) : {}),
    // Built-in tools last: an MCP tool cannot take one's name (theirs start with `mcp__`).
    ...createToolSet(
      {
        sandbox: input.sandbox,
        workspaceDir: input.workspaceDir,
        skillsDir,
        env: input.env,
        signal: input.signal,
      },
      {
        shell: options.shell,
        onOutcome: (reported) => {
          outcome = reported;
        },
      },
    ),
  };
  const recorder = createTurnRecorder(input.emit, input.model);
  const steering = input.inbox ? createSteering() : undefined;
  if (steering) {
    input.inbox?.connect(async (message) => {
      const outcome = await steering.steer({ role: 'user', content: message.content }, { id: message.id });
      if (outcome.type === 'delivered') recorder.steered(message.id, message.content);
      return outcome.type === 'delivered';
    });
  }
  const system = [
    options.systemPrompt,
    await skillCatalog(input.sandbox, skillsDir),
    input.instructions,
  ].filter(Boolean);
  const result = streamText({
    model: input.models(input.model),
    instructions: system.join('\n\n'),
    messages: input.messages,
    temperature: input.modelSettings?.temperature,
    topP: input.modelSettings?.top_p,
    maxOutputTokens: input.modelSettings?.max_output_tokens,
    reasoning: input.modelSettings?.reasoning_effort,
    tools,
    stopWhen: stepCountIs(maxSteps),
    abortSignal: input.signal,
    experimental_steering: steering,
    // Errors arrive as stream parts and become the turn's `error` event; nothing to log here.
    onError: () => {},
  });
  try {
    for await (const part of result.fullStream) recorder.record(part);
  } catch (error) {
    if (!input.signal.aborted) recorder.fail(error);
  }
  const turn = recorder.close(input.signal.aborted);

  let stopReason: StopReason = 'end_turn';
  if (turn.aborted) stopReason = 'cancelled';
  else if (turn.error) stopReason = 'error';
  else if (turn.finishedSteps >= maxSteps && turn.lastFinishReason === 'tool-calls') stopReason = 'max_turns';
  return {
    stopReason,
    outcome,
    messages: turn.messages,
    assistantIds: turn.assistantIds,
    lastAssistantText: turn.lastAssistantText,
    ...(turn.error ? { error: turn.error } : {}),
  };
}
