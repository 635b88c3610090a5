import { acpHarnesses as acpValues, type HarnessName, harnesses } from '@paddock/protocol';
import { acpHarness } from './acp/acp-harness.ts';
import { codingAlpha } from './coding-alpha/coding-alpha.ts';
import { knowledgeCloud } from './knowledge-cloud.ts';
import type { Harness } from './types.ts';

/** Coding-agent programs Paddock can drive headless once installed on a runner (D9). */
export const externalHarnessNames = acpValues;

export function isHarnessName(name: string): name is HarnessName {
  return (harnesses as readonly string[]).includes(name);
}

/**
 * A harness for an accepted name, for one sandbox; throws on any other name. Paddock's own loops hold
 * nothing between turns and are shared; an ACP harness keeps its sandbox's program and session, so
 * each call makes a new one.
 */
export function createHarness(name: string): Harness {
  if (name === 'coding_alpha') return codingAlpha;
  if (name === 'knowledge_cloud') return knowledgeCloud;
  if (!isHarnessName(name)) throw new Error(`unknown harness: ${name}`);
  return acpHarness(name);
}
