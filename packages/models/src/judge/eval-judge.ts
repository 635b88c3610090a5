import { generateText, tool } from 'ai';
import { z } from 'zod';
import type { ModelRouter } from '../model-router.ts';

interface JudgeRequest {
  model: string;
  criteria: string;
  transcript: { role: string; content: string }[];
  signal: AbortSignal;
}

const judgeInstructions = [
  'You are an evaluator. You read the transcript of a conversation between a user and an AI agent,',
  'then the criteria it is judged by, and decide whether the agent met them.',
  'Answer only by calling report_verdict once: passed is true when every criterion is met, false',
  'otherwise; reason says why in one or two sentences.',
].join(' ');

const verdictSchema = z.object({
  passed: z.boolean().describe('true when every criterion is met'),
  reason: z.string().describe('one or two sentences'),
});
type Verdict = z.infer<typeof verdictSchema>;

const verdictTool = tool({
  description: 'Report whether the conversation meets the criteria, and why.',
  inputSchema: verdictSchema,
});

/**
 * The eval judge: one call to a model the gateway's router serves, whose verdict is the structured
 * input of its `report_verdict` tool call (forced where the provider supports it). Rejects when
 * the router serves no such model, the model errs, or it answers without a verdict.
 */
export function createEvalJudge(
  router: Pick<ModelRouter, 'resolve' | 'defaultModel'>,
  defaultModel?: string,
) {
  return {
    defaultModel: defaultModel ?? router.defaultModel,
    async judge({ model, criteria, transcript, signal }: JudgeRequest): Promise<Verdict> {
      const resolved = router.resolve(model);
      if (!resolved) throw new Error(`the model gateway serves no model "${model}"`);
      const conversation = transcript.length
        ? transcript.map((m) => `[${m.role}]\n${m.content}`).join('\n\n')
        : '(no messages)';
      const result = await generateText({
        model: resolved,
        instructions: judgeInstructions,
        messages: [
          { role: 'user', content: `Transcript of the task:\n\n${conversation}` },
          { role: 'user', content: `Criteria:\n\n${criteria}\n\nCall report_verdict with your verdict.` },
        ],
        tools: { report_verdict: verdictTool },
        toolChoice: { type: 'tool', toolName: 'report_verdict' },
        maxRetries: 1,
        abortSignal: signal,
      });
      const call = result.toolCalls.find((c) => c.toolName === 'report_verdict');
      const parsed = verdictSchema.safeParse(call?.input);
      if (!parsed.success) throw new Error(`the judge (${model}) answered without a verdict`);
      return parsed.data;
    },
  };
}
