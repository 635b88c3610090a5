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

/** Each ACP value's harness, made once: it keeps its program running across turns. */
const acpHarnesses = new Map<string, Harness>();

/** The harness for an accepted name; throws on any other name. */
export function getHarness(name: string): Harness {
  if (name === 'coding_alpha') return codingAlpha;
  if (name === 'knowledge_cloud') return knowledgeCloud;
  if (!isHarnessName(name)) throw new Error(`unknown harness: ${name}`);
  const made = acpHarnesses.get(name);
  if (made) return made;
  const harness = acpHarness(name);
  acpHarnesses.set(name, harness);
  return harness;
}

/** The sandbox's thread runs `harness`: the programs started ahead for any other value are ended. */
export function dropStandbyAgents(harness: string): void {
  for (const [name, made] of acpHarnesses) if (name !== harness) made.dropStandby?.();
}
