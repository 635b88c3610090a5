import { useQuery } from '@tanstack/react-query';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/** What this deployment offers: each harness value's program, and each sandbox provider. */
export function SystemPage() {
  const harnesses = useQuery({
    queryKey: ['harnesses'],
    queryFn: ({ signal }) => client().harnesses({ signal }),
  });
  const machines = useQuery({
    queryKey: ['machines'],
    queryFn: ({ signal }) => client().machines({ signal }),
  });
  return (
    <section aria-labelledby="system-heading">
      <h1 id="system-heading">Harnesses and providers</h1>
      <h2>Harnesses</h2>
      {harnesses.isError && <ErrorNote error={harnesses.error} />}
      {harnesses.data && (
        <table className="threads">
          <thead>
            <tr>
              <th scope="col">Harness</th>
              <th scope="col">Program</th>
              <th scope="col">Installed</th>
              <th scope="col">Dialect</th>
            </tr>
          </thead>
          <tbody>
            {harnesses.data.items.map((h) => (
              <tr key={h.harness}>
                <td>
                  <code>{h.harness}</code>
                </td>
                <td>
                  {h.program} {h.version}
                </td>
                <td>{h.installed ? 'yes' : 'no (installed at first use)'}</td>
                <td>{h.dialect ?? '-'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Sandbox providers</h2>
      {machines.isError && <ErrorNote error={machines.error} />}
      {machines.data && (
        <table className="threads">
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Available</th>
              <th scope="col">Sizes</th>
            </tr>
          </thead>
          <tbody>
            {machines.data.providers.map((p) => (
              <tr key={p.machine_kind}>
                <td>
                  <code>{p.machine_kind}</code>
                </td>
                <td>
                  {p.available
                    ? `yes${p.isolation ? `, ${p.isolation}` : ''}`
                    : `no: ${p.reason ?? 'unavailable'}`}
                </td>
                <td>{p.sizes.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
