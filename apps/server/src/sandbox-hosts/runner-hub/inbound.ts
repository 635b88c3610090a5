import { parseFrame, type RunnerMessage, runnerMessageSchema } from '@paddock/sandbox';
import type { Connection, RunnerSocket } from './registry.ts';

/** What the hub logs with (pino's logger fits). */
export interface HubLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Whom a connected runner serves: every thread (the deployment's runners), or one agent's (self-hosted). */
export interface RunnerScope {
  agentId?: string;
}

export type Refuse = (reason: string, level?: 'warn' | 'error') => void;

/** What the hub does with what one link brings in, parsed. */
export interface InboundHandlers {
  hello(connection: Connection, hello: Extract<RunnerMessage, { type: 'hello' }>, refuse: Refuse): void;
  message(connection: Connection, message: Exclude<RunnerMessage, { type: 'hello' }>, refuse: Refuse): void;
  /** A frame that did not parse named a turn (of this runner's, or not). */
  malformed(connection: Connection, turnId: string): void;
  closed(connection: Connection): void;
}

/**
 * The edge of one runner's link (already authenticated): its first message is `hello`. A
 * self-hosted runner's id is prefixed with its agent, so it can never pass for another runner.
 * Every frame is parsed with the link's schemas first: a runner may be a user's machine, so a frame
 * that does not parse (or comes out of order) closes this link, with the reason logged, and touches
 * nothing else.
 */
export function acceptLink(
  socket: RunnerSocket,
  scope: RunnerScope,
  logger: HubLogger,
  handlers: InboundHandlers,
): void {
  let connection: Connection | undefined;
  let refused = false;
  const refuse: Refuse = (reason, level = 'warn') => {
    refused = true;
    logger[level](
      { runner_id: connection?.runnerId, agent_id: scope.agentId, reason },
      'runner link closed: a frame it sent was refused',
    );
    // A close reason is at most 123 bytes: ASCII only, cut short.
    socket.close(1008, reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 120));
  };
  socket.on('message', (data) => {
    if (refused) return;
    const parsed = parseFrame(runnerMessageSchema, data);
    if ('error' in parsed) {
      if (connection && parsed.turnId !== undefined) handlers.malformed(connection, parsed.turnId);
      return refuse(parsed.error);
    }
    const { message } = parsed;
    if (message.type === 'hello') {
      if (connection) return refuse('hello: sent twice');
      const runnerId = scope.agentId ? `${scope.agentId}/${message.runner_id}` : message.runner_id;
      connection = { runnerId, socket, agentId: scope.agentId };
      handlers.hello(connection, message, refuse);
    } else if (!connection) refuse(`${message.type}: before hello`);
    else handlers.message(connection, message, refuse);
  });
  socket.on('close', () => {
    if (connection) handlers.closed(connection);
  });
  socket.on('error', () => socket.terminate());
}
