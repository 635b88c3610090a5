import { PaddockError } from '@paddock/sdk';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { client, signIn } from '../../session.ts';
import { nextPath } from './redirects.ts';

/**
 * The built-in login (`POST /v2/auth/login`), and the deployment's OpenID Connect issuer when one is
 * configured (`GET /v2/auth/providers`): either answers the session token every later request sends.
 */
export function SignInPage() {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const providers = useQuery({
    queryKey: ['sign-in-providers'],
    queryFn: ({ signal }) => client('').cli.signInProviders({ signal }),
  });
  const next = nextPath(params.get('next'));
  const oidc = providers.data?.oidc;

  async function attempt(work: () => Promise<void>, failed: string) {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(caught instanceof PaddockError ? caught.message : failed);
      setBusy(false);
    }
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void attempt(async () => {
      const session = await client('').cli.login(String(form.get('username')), String(form.get('password')));
      signIn(session.access_token);
      navigate(next, { replace: true });
    }, 'The service could not be reached.');
  }

  return (
    <main className="sign-in">
      <h1>Sign in to Paddock</h1>
      {oidc && (
        <>
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              void attempt(
                // The OpenID Connect client is loaded only by those who use it.
                async () => (await import('./oidc.ts')).beginOidcSignIn(oidc, next),
                `${new URL(oidc.issuer).host} could not be reached.`,
              )
            }
          >
            Sign in with {new URL(oidc.issuer).host}
          </button>
          <p className="muted">or with a Paddock user name:</p>
        </>
      )}
      <form onSubmit={submit} aria-describedby={error ? 'sign-in-error' : undefined}>
        <label>
          User name
          <input name="username" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error && (
          <p id="sign-in-error" role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
