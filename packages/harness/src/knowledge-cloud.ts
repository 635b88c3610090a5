import type { Harness } from './types.ts';

/** Paddock's knowledge-work runtime (D9): the coding_alpha loop without the shell tool. */
export const knowledgeCloud: Harness = {
  name: 'knowledge_cloud',
  steerable: true,
  async runTurn(input) {
    const [{ runAgentLoop }, { knowledgeSystemPrompt }] = await Promise.all([
      import('./coding-alpha/agent-loop.ts'),
      import('./coding-alpha/system-prompt.ts'),
    ]);
    return runAgentLoop(input, { systemPrompt: knowledgeSystemPrompt, shell: false });
  },
};
