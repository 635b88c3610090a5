export { createOutputTail } from './output-tail.ts';
export { type ProcessRun, type RunProcessOptions, runProcess } from './run-process.ts';
