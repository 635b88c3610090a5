export * from './databases.ts';
export * from './harness-cache.ts';
export * from './test-store.ts';
