import { PaddockError } from '@paddock/sdk';

/** A failed request, said plainly: whether trying again may help (the spec's retryable errors). */
export function ErrorNote({ error }: { error: unknown }) {
  const known = error instanceof PaddockError ? error : undefined;
  return (
    <p role="alert" className="error">
      {known ? known.message : 'The service could not be reached.'}
      {known && (known.retryable ? ' Try again in a moment.' : known.status === 401 ? ' Sign in again.' : '')}
    </p>
  );
}
