import { useEffect, useState } from 'react';
import { client } from '../../session.ts';
import { emptyTranscript, foldEvent, type Transcript } from './transcript.ts';

/**
 * The thread's transcript, live: the event stream from the first event, resumed by the SDK after a
 * dropped connection (`Last-Event-ID`) without a gap; `onEvent` hears each event's type.
 */
export function useTranscript(threadId: string, onEvent: (type: string) => void) {
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const controller = new AbortController();
    setTranscript(emptyTranscript);
    setError(null);
    void (async () => {
      try {
        for await (const event of client().threads.stream(threadId, {
          after: 0,
          signal: controller.signal,
        })) {
          setTranscript((t) => foldEvent(t, event));
          onEvent(event.type);
        }
      } catch (caught) {
        if (!controller.signal.aborted) setError(caught);
      }
    })();
    return () => controller.abort();
  }, [threadId, onEvent]);
  return { transcript, error };
}
