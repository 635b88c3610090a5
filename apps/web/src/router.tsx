import type { ComponentType } from 'react';
import { createBrowserRouter, Link, Navigate, Outlet, useNavigate } from 'react-router';
import { oidcCallbackPath } from './features/sign-in/redirects.ts';
import { SignInPage } from './features/sign-in/sign-in-page.tsx';
import { sessionToken, signOut } from './session.ts';

/**
 * A page loaded when first visited: each is a chunk of its own, so the first page does not wait for
 * the code of all the others (the router keeps the current page up while the next one loads).
 */
const page = (load: () => Promise<ComponentType>) => ({ lazy: async () => ({ Component: await load() }) });

/** Pages that need a session: without one, the sign-in page (which comes back here after). */
function SignedIn() {
  const navigate = useNavigate();
  if (!sessionToken())
    return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname)}`} replace />;
  return (
    <>
      <header className="bar">
        <Link className="brand" to="/">
          Paddock
        </Link>
        <nav aria-label="Main">
          <Link to="/">Threads</Link> <Link to="/agents">Agents</Link>{' '}
          <Link to="/orchestrations">Orchestrations</Link> <Link to="/orgs">Teams</Link>{' '}
          <Link to="/system">Harnesses</Link> <Link to="/tokens">Tokens</Link> <Link to="/usage">Usage</Link>
        </nav>
        <button
          type="button"
          className="quiet"
          onClick={() => {
            signOut();
            navigate('/sign-in');
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        <Outlet />
      </main>
    </>
  );
}

export const router = createBrowserRouter([
  { path: '/sign-in', element: <SignInPage /> },
  {
    path: oidcCallbackPath,
    ...page(async () => (await import('./features/sign-in/oidc-callback-page.tsx')).OidcCallbackPage),
  },
  {
    element: <SignedIn />,
    children: [
      {
        path: '/',
        ...page(async () => (await import('./features/threads/threads-page.tsx')).ThreadsPage),
      },
      {
        path: '/threads/:threadId',
        ...page(async () => (await import('./features/threads/thread-page.tsx')).ThreadPage),
      },
      {
        path: '/agents',
        ...page(async () => (await import('./features/agents/agents-page.tsx')).AgentsPage),
      },
      {
        path: '/agents/:agentId',
        ...page(async () => (await import('./features/agents/agent-page.tsx')).AgentPage),
      },
      {
        path: '/system',
        ...page(async () => (await import('./features/settings/system-page.tsx')).SystemPage),
      },
      {
        path: '/orgs',
        ...page(async () => (await import('./features/orgs/orgs-page.tsx')).OrgsPage),
      },
      {
        path: '/orchestrations',
        ...page(
          async () => (await import('./features/orchestrations/orchestrations-page.tsx')).OrchestrationsPage,
        ),
      },
      {
        path: '/tokens',
        ...page(async () => (await import('./features/settings/tokens-page.tsx')).TokensPage),
      },
      {
        path: '/usage',
        ...page(async () => (await import('./features/usage/usage-page.tsx')).UsagePage),
      },
    ],
  },
  { path: '*', element: <Navigate to="/" replace /> },
]);
