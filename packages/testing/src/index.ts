export * from './databases.ts';
export * from './test-store.ts';
