import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';

/**
 * The peer runtime's agent in `npm run bench`: the least an ACP agent on stdio can be, with no
 * dependency to load, so the peer's figures are its own path and nothing of an agent's. A prompt
 * streams one message chunk and ends the turn. It ends with its stdin.
 */
const send = (message: object) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

const answers: Record<string, (params: { sessionId?: string }) => object> = {
  initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }),
  'session/new': () => ({ sessionId: randomUUID() }),
  'session/prompt': ({ sessionId }) => {
    send({
      method: 'session/update',
      params: {
        sessionId,
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hello' } },
      },
    });
    return { stopReason: 'end_turn' };
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const { id, method, params } = JSON.parse(line) as {
    id?: number;
    method: string;
    params: { sessionId?: string };
  };
  if (id === undefined) continue;
  const answer = answers[method];
  if (answer) send({ id, result: answer(params) });
  else send({ id, error: { code: -32601, message: `${method} is not supported` } });
}
