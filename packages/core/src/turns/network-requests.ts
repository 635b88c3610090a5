import type { EventLog } from '@paddock/runtime';
import type { Services } from '../context.ts';
import type { NetworkRecorder } from './sandbox-host.ts';

/**
 * Stores each connection a sandbox made through its egress proxy as the thread's `network.request`
 * event, and publishes it. It belongs to no turn: a sandbox connects while booting (its entrypoint),
 * between turns (a process the agent left running) and during them alike. A thread deleted
 * meanwhile takes no event; that is logged, not thrown at the proxy.
 */
export function networkRecorder(events: EventLog, log: Services['log']): NetworkRecorder {
  return (threadId, record) =>
    void events
      .append(threadId, null, [{ type: 'network.request', data: record }])
      .catch((err: unknown) =>
        log.warn({ err, thread_id: threadId }, 'recording a sandbox connection failed'),
      );
}
