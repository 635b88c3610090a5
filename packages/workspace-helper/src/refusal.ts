import type { RefusalCode } from './requests.ts';

/** A path the helper will not serve, with the API's code for it; any other error is a failure. */
export class Refusal extends Error {
  readonly code: RefusalCode;
  constructor(code: RefusalCode, message: string) {
    super(message);
    this.code = code;
  }
}

export const outside = (path: string, why = 'the path leads outside the workspace') =>
  new Refusal('invalid_path', `${why}: ${JSON.stringify(path)}`);
export const notFound = (path: string) =>
  new Refusal('path_not_found', `no such file or directory in the workspace: ${JSON.stringify(path)}`);
export const notAFile = (path: string) =>
  new Refusal('not_a_file', `not a regular file (a directory?): ${JSON.stringify(path)}`);
