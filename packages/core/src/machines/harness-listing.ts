import type { HarnessListing } from '@paddock/protocol';
import type { Services } from '../context.ts';

/** Paddock's own loops, always there: they steer, resume from their own transcript, and cancel. */
const builtins: HarnessListing[] = [
  { harness: 'coding_alpha', program: 'Paddock coding agent' },
  { harness: 'knowledge_cloud', program: 'Paddock knowledge runtime' },
].map(({ harness, program }) => ({
  harness,
  program,
  version: 'builtin',
  kind: 'builtin',
  installed: true,
  dialect: null,
  abilities: { steering: true, resume: 'native', cancel: true },
}));

/**
 * `GET /v2/harnesses` (D9): each harness value, its program and version, whether this node has it
 * installed, the gateway dialect it speaks and what it supports. The same for every caller.
 */
export function listHarnesses(services: Pick<Services, 'harnesses'>): HarnessListing[] {
  const programs = services.harnesses;
  const acp: HarnessListing[] = [...(programs?.profiles ?? [])].map(([harness, profile]) => ({
    harness,
    program: profile.program,
    version: profile.version,
    kind: 'acp',
    installed: programs!.isInstalled(profile),
    dialect: profile.dialect,
    abilities: {
      steering: profile.steering,
      resume: profile.load_session ? 'native' : 'transcript',
      cancel: true,
    },
  }));
  return [...builtins, ...acp];
}
