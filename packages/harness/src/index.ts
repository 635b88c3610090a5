export { preloadHarnesses } from './preload.ts';
export type { HarnessName } from './registry.ts';
export { externalHarnessNames, getHarness, harnessNames, isHarnessName } from './registry.ts';
export type * from './types.ts';
