import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/**
 * An agent's secrets by name: set, replace and remove them one at a time. A value goes to the
 * service and is never read back (the service answers names only), so it is never shown.
 */
export function SecretsPanel({ agentId, names }: { agentId: string; names: string[] }) {
  const queries = useQueryClient();
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);

  async function run(work: () => Promise<unknown>, done: string) {
    setError(null);
    setSaved(null);
    try {
      await work();
      await queries.invalidateQueries({ queryKey: ['agent', agentId] });
      setSaved(done);
      setEditing(null);
    } catch (caught) {
      setError(caught);
    }
  }

  function submit(event: FormEvent<HTMLFormElement>, name?: string) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const key = name ?? String(form.get('name')).trim();
    const value = String(form.get('value'));
    event.currentTarget.reset();
    void run(() => client().agents.setSecret(agentId, key, value), `${key} saved`);
  }

  return (
    <section aria-labelledby="secrets-heading">
      <h2 id="secrets-heading">Secrets</h2>
      {names.length === 0 && <p className="empty">No secrets.</p>}
      <ul className="secrets">
        {names.map((name) => (
          <li key={name}>
            <code>{name}</code> <span className="muted">value hidden</span>
            {editing === name ? (
              <form onSubmit={(e) => submit(e, name)} className="inline">
                <label>
                  New value for {name}
                  <input name="value" type="password" autoComplete="off" required />
                </label>
                <button type="submit">Save</button>
                <button type="button" className="quiet" onClick={() => setEditing(null)}>
                  Cancel
                </button>
              </form>
            ) : (
              <>
                <button type="button" className="quiet" onClick={() => setEditing(name)}>
                  Replace {name}
                </button>
                <button
                  type="button"
                  className="danger"
                  onClick={() =>
                    void run(() => client().agents.deleteSecret(agentId, name), `${name} removed`)
                  }
                >
                  Remove {name}
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      <form onSubmit={(e) => submit(e)} className="inline">
        <label>
          Secret name
          <input name="name" pattern="[A-Za-z_][A-Za-z0-9_]*" required autoComplete="off" />
        </label>
        <label>
          Secret value
          <input name="value" type="password" autoComplete="off" required />
        </label>
        <button type="submit">Add secret</button>
      </form>
      {saved && <p role="status">{saved}</p>}
      {error !== null && <ErrorNote error={error} />}
    </section>
  );
}
