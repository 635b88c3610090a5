export { preloadHarnesses } from './preload.ts';
export { externalHarnessNames, getHarness, isHarnessName } from './registry.ts';
export type * from './types.ts';
