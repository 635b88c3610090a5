import { createBrowserRouter, Navigate, Outlet, useNavigate } from 'react-router';
import { SignInPage } from './features/sign-in/sign-in-page.tsx';
import { ThreadPage } from './features/threads/thread-page.tsx';
import { ThreadsPage } from './features/threads/threads-page.tsx';
import { sessionToken, signOut } from './session.ts';

/** Pages that need a session: without one, the sign-in page (which comes back here after). */
function SignedIn() {
  const navigate = useNavigate();
  if (!sessionToken())
    return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname)}`} replace />;
  return (
    <>
      <header className="bar">
        <a className="brand" href="/">
          Paddock
        </a>
        <nav aria-label="Main">
          <a href="/">Threads</a>
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
    ],
  },
  { path: '*', element: <Navigate to="/" replace /> },
]);
