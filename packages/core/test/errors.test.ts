import { errorStatus } from '@paddock/protocol';
import { describe, expect, it } from 'vitest';
import { PaddockError } from '../src/errors.ts';

describe('PaddockError', () => {
  it('takes a code of the protocol vocabulary, which gives its status', () => {
    expect(errorStatus[new PaddockError('task_busy', 'busy').code]).toBe(409);
    // @ts-expect-error A code outside the vocabulary does not compile (`npm run check`).
    expect(errorStatus[new PaddockError('no_such_code', 'x').code]).toBeUndefined();
  });
});
