import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { signIn } from '../../session.ts';
import { finishOidcSignIn } from './oidc.ts';
import { nextPath } from './redirects.ts';

/** One exchange per callback address: a code is good once, however often the effect runs. */
let exchange: { href: string; result: ReturnType<typeof finishOidcSignIn> } | undefined;

/** Where the OpenID Connect issuer sends the browser back: the code becomes the session. */
export function OidcCallbackPage() {
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    const href = window.location.href;
    if (exchange?.href !== href) exchange = { href, result: finishOidcSignIn(new URL(href)) };
    exchange.result.then(
      ({ token, next }) => {
        if (!current) return;
        signIn(token);
        navigate(nextPath(next), { replace: true });
      },
      (caught: unknown) => {
        if (current) setError(caught instanceof Error ? caught.message : String(caught));
      },
    );
    return () => {
      current = false;
    };
  }, [navigate]);
  return (
    <main className="sign-in">
      <h1>Signing in</h1>
      {error ? (
        <>
          <p role="alert" className="error">
            {error}
          </p>
          <Link to="/sign-in">Back to sign-in</Link>
        </>
      ) : (
        <p aria-live="polite">Finishing the sign-in…</p>
      )}
    </main>
  );
}
