export * from './events.ts';
export * from './ids.ts';
export * from './time.ts';
