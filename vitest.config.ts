import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** Said at the end of a run without PostgreSQL, so a green run on SQLite alone is not taken for both. */
const postgresSkipped =
  'PostgreSQL tests skipped: set PADDOCK_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ' +
  '(a server where the tests may create databases) to run them; see README.md, Development';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.{ts,tsx}'],
    // Paddock's Go programs, built before the first worker starts (build-go-programs.ts).
    globalSetup: ['packages/testing/src/build-go-programs.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A worker runs its files one after another in one process: the server's modules load once per
    // worker, not once per file (the suite is bound by the two cores' time, not by waiting).
    isolate: false,
    // Test files mostly wait on sandboxes, processes, programs and databases: three at once even on
    // two cores (Vitest's default, one fewer than the cores, runs them one by one there: 18 min
    // against 12 with two, before the coding agents' suites).
    maxWorkers: Math.max(3, availableParallelism()),
    reporters: [
      'default',
      {
        // The suites run on PostgreSQL too when this is set (testDatabases() in @paddock/testing).
        onTestRunEnd() {
          if (!process.env.PADDOCK_TEST_DATABASE_URL) process.stdout.write(`\n${postgresSkipped}\n\n`);
        },
      },
    ],
  },
});
