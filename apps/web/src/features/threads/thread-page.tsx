import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useCallback, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';
import { FilesPanel } from '../files/files-panel.tsx';
import type { Entry } from './transcript.ts';
import { useTranscript } from './use-transcript.ts';

function EntryView({ entry }: { entry: Entry }) {
  switch (entry.kind) {
    case 'user':
      return (
        <li className="message user">
          <span className="who">You</span>
          <p>{entry.text}</p>
        </li>
      );
    case 'assistant':
      return (
        <li className="message assistant" aria-busy={entry.streaming}>
          <span className="who">Agent</span>
          <p>{entry.text}</p>
        </li>
      );
    case 'tool':
      return (
        <li className={`tool tool-${entry.status}`}>
          <details>
            <summary>
              <span className="tool-name">{entry.name}</span>{' '}
              <span className="tool-status">{entry.status}</span>
            </summary>
            <p className="tool-label">Input</p>
            <pre>{entry.input}</pre>
            {entry.output && (
              <>
                <p className="tool-label">Output</p>
                <pre>{entry.output}</pre>
              </>
            )}
          </details>
        </li>
      );
    case 'note':
      return <li className="note">{entry.text}</li>;
  }
}

/** A thread: its live transcript, a follow-up box and Stop. */
export function ThreadPage() {
  const { threadId = '' } = useParams();
  const queries = useQueryClient();
  const thread = useQuery({
    queryKey: ['thread', threadId],
    queryFn: ({ signal }) => client().threads.get(threadId, { signal }),
    refetchInterval: 5000,
  });
  // A turn starting or ending changes the thread's status: read it again at once.
  const onEvent = useCallback(
    (type: string) => {
      if (['turn.started', 'turn.ended', 'idle'].includes(type))
        void queries.invalidateQueries({ queryKey: ['thread', threadId] });
      // A turn's tools may have changed the workspace.
      if (type === 'turn.ended') void queries.invalidateQueries({ queryKey: ['files', threadId] });
    },
    [queries, threadId],
  );
  const { transcript, error: streamError } = useTranscript(threadId, onEvent);
  const [draft, setDraft] = useState('');
  const [actionError, setActionError] = useState<unknown>(null);
  const [sending, setSending] = useState(false);
  const [stopping, setStopping] = useState(false);

  async function send(event: FormEvent) {
    event.preventDefault();
    if (!draft.trim()) return;
    setSending(true);
    setActionError(null);
    try {
      await client().tasks.sendInput(threadId, { messages: draft });
      setDraft('');
    } catch (caught) {
      setActionError(caught);
    } finally {
      setSending(false);
    }
  }

  async function stop() {
    setStopping(true);
    setActionError(null);
    try {
      await client().threads.interrupt(threadId);
      await queries.invalidateQueries({ queryKey: ['thread', threadId] });
    } catch (caught) {
      setActionError(caught);
    } finally {
      setStopping(false);
    }
  }

  if (thread.isError) return <ErrorNote error={thread.error} />;
  const status = thread.data?.status;
  return (
    <section aria-labelledby="thread-heading" className="thread">
      <header className="thread-head">
        <h1 id="thread-heading">{thread.data?.title || 'Thread'}</h1>
        {status && (
          <span className={`status status-${status}`} data-testid="thread-status">
            {status}
          </span>
        )}
        {thread.data && <Link to={`/agents/${thread.data.agent_id}`}>Agent</Link>}
        <button type="button" className="danger" onClick={stop} disabled={status !== 'running' || stopping}>
          {stopping ? 'Stopping…' : 'Stop'}
        </button>
      </header>
      {streamError !== null && <ErrorNote error={streamError} />}
      <ol className="transcript" aria-live="polite" aria-label="Transcript">
        {transcript.entries.map((entry) => (
          <EntryView key={entry.key} entry={entry} />
        ))}
      </ol>
      {transcript.entries.length === 0 && !streamError && <p className="empty">Nothing yet.</p>}
      <form className="follow-up" onSubmit={send}>
        <label htmlFor="follow-up">Follow-up</label>
        <textarea
          id="follow-up"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) void send(e);
          }}
          rows={3}
        />
        <button type="submit" disabled={sending || !draft.trim()}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </form>
      {actionError !== null && <ErrorNote error={actionError} />}
      <FilesPanel threadId={threadId} />
    </section>
  );
}
