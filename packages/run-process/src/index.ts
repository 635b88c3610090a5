export { createOutputTail } from './output-tail.ts';
