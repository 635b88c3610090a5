import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { StopReason, TurnResult } from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import { mcpToolSet } from '../mcp/mcp-tool-set.ts';
import type { Outcome } from '../tools/report-outcome.ts';
import { createToolSet } from '../tools/tool-set.ts';
import type { HarnessTurnInput } from '../types.ts';
import { toPromptMessage } from './model-prompt.ts';
import { runModelStep } from './model-step.ts';
import { offeredTools } from './model-tools.ts';
import { skillCatalog } from './skill-catalog.ts';
import { steeredMessages } from './steered-messages.ts';
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
  const steered = steeredMessages(input.inbox);
  const system = [
    options.systemPrompt,
    await skillCatalog(input.sandbox, skillsDir),
    input.instructions,
  ].filter(Boolean);
  // The model's provider is called directly, step by step (see docs/performance.md, "The built-in
  // harness's own time"): the conversation is converted once and grows with each step.
  const prompt: LanguageModelV4Prompt = [
    { role: 'system', content: system.join('\n\n') },
    ...input.messages.map(toPromptMessage),
  ];
  const settings = input.modelSettings;
  const call = {
    prompt,
    tools: await offeredTools(tools),
    toolChoice: { type: 'auto' as const },
    temperature: settings?.temperature,
    topP: settings?.top_p,
    maxOutputTokens: settings?.max_output_tokens,
    reasoning: settings?.reasoning_effort,
    abortSignal: input.signal,
  };
  try {
    const model = input.models(input.model);
    for (let step = 0; step < maxSteps && !input.signal.aborted; step++) {
      for (const message of steered.take()) {
        recorder.steered(message.id, message.content);
        prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
      }
      const { toolCalls } = await runModelStep(model, call, tools, recorder);
      const { added, finishReason } = recorder.finishStep();
      prompt.push(...added.map(toPromptMessage));
      if (recorder.failed) break;
      // With no tool call the turn is over, unless a message was steered in meanwhile (and the
      // model was not cut off).
      const cutOff = finishReason === 'length' || finishReason === 'content-filter';
      if (toolCalls === 0 && (cutOff || !steered.waiting)) break;
    }
  } catch (error) {
    if (!input.signal.aborted) recorder.fail(error);
  } finally {
    steered.end();
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
