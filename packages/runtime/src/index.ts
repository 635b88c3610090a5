export * from './event-bus.ts';
export * from './event-log.ts';
export * from './turn-queue.ts';
export * from './turn-worker.ts';
