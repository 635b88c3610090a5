import type { Logger } from '../context.ts';

/**
 * Where a turn's time goes, from its input (a follow-up, or a new thread's first) being stored to
 * its first chunk written to a stream (`PADDOCK_TRACE_TURNS`, see docs/performance.md): each stage is marked once per input, by
 * thread, in the server process; the sandbox's own time is what lies between `turn_sent` and
 * `model_request`, and between `model_first_chunk` and `chunk_emitted`.
 */
export const traceStages = [
  'input_stored',
  'turn_claimed',
  'turn_begun',
  'sandbox_ready',
  'turn_sent',
  'model_request',
  'model_first_chunk',
  'chunk_emitted',
  'chunk_streamed',
] as const;
export type TraceStage = (typeof traceStages)[number];

export interface TurnTrace {
  mark(threadId: string, stage: TraceStage): void;
}

/** Tracing off: marks cost one call. */
export const noTurnTrace: TurnTrace = { mark() {} };

/**
 * Keeps each thread's marks from its newest stored input and, once its first chunk is written to
 * a stream, logs them as milliseconds after the input (`turn timeline`). At most `capacity`
 * threads are followed at once (a turn nobody streams is dropped, oldest first).
 */
export function loggedTurnTrace(log: Logger, capacity = 1000): TurnTrace {
  const timelines = new Map<string, Partial<Record<TraceStage, number>>>();
  return {
    mark(threadId, stage) {
      const now = performance.now();
      if (stage === 'input_stored') {
        timelines.delete(threadId);
        if (timelines.size >= capacity) timelines.delete(timelines.keys().next().value!);
        timelines.set(threadId, { input_stored: now });
        return;
      }
      const timeline = timelines.get(threadId);
      if (!timeline || timeline[stage] !== undefined) return;
      timeline[stage] = now;
      if (stage !== 'chunk_streamed') return;
      timelines.delete(threadId);
      const start = timeline.input_stored!;
      const ms: Partial<Record<TraceStage, number>> = {};
      for (const name of traceStages)
        if (timeline[name] !== undefined) ms[name] = Math.round((timeline[name] - start) * 100) / 100;
      log.info({ thread_id: threadId, ms }, 'turn timeline');
    },
  };
}
