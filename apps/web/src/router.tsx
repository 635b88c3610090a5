import { createBrowserRouter, Link, Navigate, Outlet, useNavigate } from 'react-router';
import { AgentPage } from './features/agents/agent-page.tsx';
import { AgentsPage } from './features/agents/agents-page.tsx';
import { OrchestrationsPage } from './features/orchestrations/orchestrations-page.tsx';
import { OrgsPage } from './features/orgs/orgs-page.tsx';
import { SystemPage } from './features/settings/system-page.tsx';
import { TokensPage } from './features/settings/tokens-page.tsx';
import { SignInPage } from './features/sign-in/sign-in-page.tsx';
import { ThreadPage } from './features/threads/thread-page.tsx';
import { ThreadsPage } from './features/threads/threads-page.tsx';
import { UsagePage } from './features/usage/usage-page.tsx';
import { sessionToken, signOut } from './session.ts';

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
    element: <SignedIn />,
    children: [
      { path: '/', element: <ThreadsPage /> },
      { path: '/threads/:threadId', element: <ThreadPage /> },
      { path: '/agents', element: <AgentsPage /> },
      { path: '/agents/:agentId', element: <AgentPage /> },
      { path: '/system', element: <SystemPage /> },
      { path: '/orgs', element: <OrgsPage /> },
      { path: '/orchestrations', element: <OrchestrationsPage /> },
      { path: '/tokens', element: <TokensPage /> },
      { path: '/usage', element: <UsagePage /> },
    ],
  },
  { path: '*', element: <Navigate to="/" replace /> },
]);
