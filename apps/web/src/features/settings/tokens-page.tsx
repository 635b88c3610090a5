import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

const scopes = ['read', 'publish', 'admin'] as const;

/** Personal access tokens: minted (the value shown once, here only), renamed never, revoked. */
export function TokensPage() {
  const queries = useQueryClient();
  const tokens = useQuery({
    queryKey: ['tokens'],
    queryFn: ({ signal }) => client().cli.tokens.list({ signal }),
  });
  const [minted, setMinted] = useState<{ name: string; token: string } | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function mint(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const chosen = scopes.filter((s) => form.get(s) === 'on');
    setError(null);
    try {
      const created = await client().cli.tokens.create({
        name: String(form.get('name')),
        scopes: chosen.length ? chosen : ['read'],
      });
      setMinted({ name: created.name, token: created.token });
      element.reset();
      await queries.invalidateQueries({ queryKey: ['tokens'] });
    } catch (caught) {
      setError(caught);
    }
  }

  async function revoke(id: string) {
    setError(null);
    try {
      await client().cli.tokens.revoke(id);
      await queries.invalidateQueries({ queryKey: ['tokens'] });
    } catch (caught) {
      setError(caught);
    }
  }

  return (
    <section aria-labelledby="tokens-heading">
      <h1 id="tokens-heading">Personal access tokens</h1>
      <p className="muted">
        For the command line and scripts (SERVICE_TOKEN). A token is shown once, when it is made.
      </p>
      <form onSubmit={mint} className="inline">
        <label>
          Name
          <input name="name" required maxLength={100} autoComplete="off" />
        </label>
        <fieldset className="scopes">
          <legend>Scopes</legend>
          {scopes.map((s) => (
            <label key={s} className="check">
              <input type="checkbox" name={s} defaultChecked={s === 'read'} /> {s}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create token</button>
      </form>
      {minted && (
        <div role="status" className="minted">
          <p>
            Token <strong>{minted.name}</strong>, shown this once: copy it now.
          </p>
          <code data-testid="minted-token">{minted.token}</code>
          <button type="button" className="quiet" onClick={() => setMinted(null)}>
            Done
          </button>
        </div>
      )}
      {error !== null && <ErrorNote error={error} />}
      {tokens.isError && <ErrorNote error={tokens.error} />}
      {tokens.data && (
        <table className="threads">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Token</th>
              <th scope="col">Scopes</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.data.items.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td>
                <td>
                  <code>{t.prefix}…</code>
                </td>
                <td>{t.scopes.join(', ')}</td>
                <td>
                  <button type="button" className="danger" onClick={() => void revoke(t.id)}>
                    Revoke {t.name}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
