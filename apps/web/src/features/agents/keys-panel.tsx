import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/** An agent's keys: minted (the value shown once), listed by prefix, revoked. */
export function KeysPanel({ agentId }: { agentId: string }) {
  const queries = useQueryClient();
  const keys = useQuery({
    queryKey: ['keys', agentId],
    queryFn: ({ signal }) => client().cli.agents.keys(agentId, { signal }),
  });
  const [minted, setMinted] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function act(work: () => Promise<void>) {
    setError(null);
    try {
      await work();
      await queries.invalidateQueries({ queryKey: ['keys', agentId] });
    } catch (caught) {
      setError(caught);
    }
  }

  function mint(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const name = String(new FormData(element).get('key-name')).trim();
    void act(async () => {
      const created = await client().cli.agents.createKey(agentId, name || undefined);
      setMinted(created.key);
      element.reset();
    });
  }

  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">Keys</h2>
      <p className="muted">
        An agent key starts threads of this agent only (X-Paddock-Agent-Key, or a bearer token).
      </p>
      {keys.isError && <ErrorNote error={keys.error} />}
      {keys.data?.items.length === 0 && <p className="empty">No keys.</p>}
      <ul className="secrets">
        {keys.data?.items.map((k) => (
          <li key={k.id}>
            <code>{k.prefix}…</code> {k.name}
            <button
              type="button"
              className="danger"
              onClick={() => void act(() => client().cli.agents.revokeKey(k.id))}
            >
              Revoke {k.name}
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={mint} className="inline">
        <label>
          Key name
          <input name="key-name" maxLength={100} autoComplete="off" />
        </label>
        <button type="submit">Create key</button>
      </form>
      {minted && (
        <div role="status" className="minted">
          <p>The new key, shown this once: copy it now.</p>
          <code data-testid="minted-key">{minted}</code>
          <button type="button" className="quiet" onClick={() => setMinted(null)}>
            Done
          </button>
        </div>
      )}
      {error !== null && <ErrorNote error={error} />}
    </section>
  );
}
