export * from './event-bus.ts';
export * from './event-log.ts';
export * from './node-signals.ts';
export * from './pg-event-bus.ts';
export * from './pg-listener.ts';
export * from './turn-queue.ts';
export * from './turn-worker.ts';
