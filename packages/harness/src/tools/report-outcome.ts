import { type OutcomeStatus, outcomeStatuses } from '@paddock/protocol';
import { tool, zodSchema } from 'ai';
import { z } from 'zod';

export interface Outcome {
  status: OutcomeStatus;
  summary: string;
}

/** The tool's input, converted to JSON Schema once per process (not at every model call). */
const reportOutcomeInput = zodSchema(
  z.object({
    status: z.enum(outcomeStatuses),
    summary: z.string().describe('One or two sentences for the user.'),
  }),
);

/** The D7 outcome tool: the model tells how the task went, and the thread settles to that status. */
export function reportOutcomeTool(record: (outcome: Outcome) => void) {
  return tool({
    description:
      'Report how the task ended: success when it is done, fail when it cannot be done, need_more_info ' +
      'when you need the user to answer a question. Call it once, at the end of your work.',
    inputSchema: reportOutcomeInput,
    execute: async ({ status, summary }) => {
      record({ status, summary });
      return `outcome recorded: ${status}`;
    },
  });
}
