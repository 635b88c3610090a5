import { turnResultSchema } from '@paddock/protocol';
import { modelMessageSchema } from 'ai';

/**
 * A harness turn's result as a schema, for results that come from a peer the server does not trust
 * (a runner on a user's machine, a supervisor the agent's code may have taken over): its messages
 * join the thread's transcript, so each must be a message the AI SDK takes.
 */
export const harnessTurnResultSchema = turnResultSchema(modelMessageSchema);
