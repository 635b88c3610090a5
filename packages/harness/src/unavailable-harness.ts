import type { Harness } from './types.ts';

/**
 * Stands in for a coding-agent program that this runner does not have installed (D9): every turn
 * fails at once with `harness_unavailable`.
 */
export function unavailableHarness(name: string): Harness {
  return {
    name,
    steerable: false,
    async runTurn(input) {
      const error = {
        code: 'harness_unavailable',
        message: `${name} is not installed on this runner`,
        retryable: false,
      };
      input.emit({ type: 'error', data: error });
      return { stopReason: 'error', messages: [], lastAssistantText: '', error };
    },
  };
}
