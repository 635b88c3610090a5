import { codingAlpha } from './coding-alpha/coding-alpha.ts';
import { knowledgeCloud } from './knowledge-cloud.ts';
import type { Harness } from './types.ts';
import { unavailableHarness } from './unavailable-harness.ts';

/** Coding-agent programs Paddock can drive headless once installed on a runner (D9). */
export const externalHarnessNames = [
  'coding_beta',
  'coding_gamma',
  'coding_delta',
  'coding_epsilon',
  'coding_zeta',
  'coding_eta',
] as const;

/** Every accepted harness value. */
export const harnessNames = ['coding_alpha', 'knowledge_cloud', ...externalHarnessNames] as const;
export type HarnessName = (typeof harnessNames)[number];

export function isHarnessName(name: string): name is HarnessName {
  return (harnessNames as readonly string[]).includes(name);
}

/** The harness for an accepted name; throws on any other name. */
export function getHarness(name: string): Harness {
  if (name === 'coding_alpha') return codingAlpha;
  if (name === 'knowledge_cloud') return knowledgeCloud;
  if (isHarnessName(name)) return unavailableHarness(name);
  throw new Error(`unknown harness: ${name}`);
}
