import type { Harness } from '../types.ts';

/** Paddock's own coding agent (D9): shell, read, write, edit, list and report_outcome. */
export const codingAlpha: Harness = {
  name: 'coding_alpha',
  steerable: true,
  async runTurn(input) {
    // Loaded on first use: importing the harness package stays cheap for those who only list names.
    const [{ runAgentLoop }, { codingSystemPrompt }] = await Promise.all([
      import('./agent-loop.ts'),
      import('./system-prompt.ts'),
    ]);
    return runAgentLoop(input, { systemPrompt: codingSystemPrompt, shell: true });
  },
};
